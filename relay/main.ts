/** The relay process (`npm run relay`, `npm run relay -- --sim`): configuration from the environment, SIGTERM drains. */
// First, before anything loads `telegram`: GramJS's serialiser keeps the long writer it finds at load (tl-longs.ts).
import './beta/tl-longs'
import { requireFastLongsInApi } from './beta/api-longs'
import { loadConfig } from './config'
import { startRelay } from './relay'

let relay: Awaited<ReturnType<typeof startRelay>>
try {
  requireFastLongsInApi('relay/main.ts')
  relay = await startRelay(loadConfig(process.env, process.argv.slice(2)))
} catch (err) {
  console.error(err instanceof Error ? err.message : String(err))
  process.exit(78)
}
if (relay.simUrl) console.log(`Sim control API: ${relay.simUrl}`)
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void relay.drain())
process.exit(await relay.done)
