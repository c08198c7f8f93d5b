import { Api } from 'telegram'
import { startSimNetwork } from './relay/sim/network/server'
import { gramClients } from './test/fixtures/gram-client'
import { SIM_BETA_CREDS } from './relay/sim/network/beta-network'
const { apiId, apiHash } = SIM_BETA_CREDS
const sim = await startSimNetwork({ betaTiming: { codeMs: 60_000, qrMs: 30_000 } })
const gram = gramClients(() => sim.dc)
const PHONE = '+15557780001'
const res = await fetch(`${sim.url}/sim/beta/dc/sessions`, { method: 'POST', headers: {'content-type': 'application/json'}, body: JSON.stringify({ phone: PHONE }) })
const j: any = await res.json()
const cl = await gram.open(j.session)
const t = setTimeout(() => { console.log('stuck', sim.dc.stats, sim.dc.connections.size); process.exit(1) }, 5000)
console.log(await cl.c.connect())
const sent = await cl.c.invoke(new Api.auth.SendCode({ phoneNumber: PHONE.slice(1), apiId, apiHash, settings: new Api.CodeSettings({}) }))
console.log(sent.className)
const code: any = await (await fetch(`${sim.url}/sim/beta/${encodeURIComponent(PHONE)}/code`)).json()
console.log(code)
const auth = await cl.c.invoke(new Api.auth.SignIn({ phoneNumber: PHONE.slice(1), phoneCodeHash: (sent as any).phoneCodeHash, phoneCode: String(code.code) }))
console.log(auth.className)
clearTimeout(t)
await gram.destroyAll(); await sim.close()
