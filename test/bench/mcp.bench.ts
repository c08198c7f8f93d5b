/**
 * Issue #4: the cost of MCP over REST. A `tools/call` of get_usage (one JSON-RPC POST, as any streamable-HTTP
 * client sends it) against the direct GET /v1/usage it runs in-process, interleaved call by call so both see the
 * same machine state; p50 over 300 calls each. Also tools/list and the official SDK client's round trip.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { api, ms, percentile, request, type Bench } from './bench-kit'

const SAMPLES = 300
const WARMUP = 20
const TARGET_RATIO = 1.5

async function timed(f: () => Promise<void>): Promise<number> {
  const t = performance.now()
  await f()
  return performance.now() - t
}

export const mcpBench: Bench = {
  name: 'mcp',
  async run({ server, baseline }) {
    const { key } = await server.newTenant()
    let id = 0
    const post = async (method: string, params: Record<string, unknown>) => {
      // The same client, agent and address (past wrangler's proxy) as the direct call it is compared with.
      const res = await request(
        `${server.directUrl}/mcp`,
        'POST',
        { 'X-API-Key': key, Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2025-06-18' },
        { jsonrpc: '2.0', id: ++id, method, params }
      )
      const json = res.json as { result?: { isError?: boolean; content?: { text: string }[] } }
      if (res.status !== 200 || json.result?.isError) throw new Error(`${method} answered ${res.status}: ${JSON.stringify(json)}`)
    }
    const direct = async () => {
      const r = await api(server, key, 'GET', '/usage')
      if (r.status !== 200) throw new Error(`GET /usage answered ${r.status}`)
    }
    const viaMcp = () => post('tools/call', { name: 'get_usage', arguments: {} })

    for (let i = 0; i < WARMUP; i++) await Promise.all([direct(), viaMcp(), post('tools/list', {})])
    const directMs: number[] = []
    const mcpMs: number[] = []
    const listMs: number[] = []
    for (let i = 0; i < SAMPLES; i++) {
      directMs.push(await timed(direct))
      mcpMs.push(await timed(viaMcp))
      if (i % 3 === 0) listMs.push(await timed(() => post('tools/list', {})))
    }

    // The official client, connected once (initialize is not part of a call), for the figure a real agent sees.
    const transport = new StreamableHTTPClientTransport(new URL(`${server.directUrl}/mcp`), { requestInit: { headers: { 'X-API-Key': key } } })
    const client = new Client({ name: 'bench', version: '1.0.0' })
    await client.connect(transport)
    const sdkMs: number[] = []
    try {
      for (let i = 0; i < WARMUP; i++) await client.callTool({ name: 'get_usage', arguments: {} })
      for (let i = 0; i < SAMPLES; i++) sdkMs.push(await timed(async () => void (await client.callTool({ name: 'get_usage', arguments: {} }))))
    } finally {
      await client.close()
    }

    const d50 = percentile(directMs, 50)
    const m50 = percentile(mcpMs, 50)
    const ratio = m50 / d50
    return {
      title: 'MCP overhead (issue #4)',
      rows: [
        { metric: 'baseline GET /v1/usage round trip p50 / p99', value: `${ms(baseline.usageP50Ms)} / ${ms(baseline.usageP99Ms)}` },
        { metric: `direct GET /v1/usage p50 / p99 (${SAMPLES} calls, interleaved)`, value: `${ms(d50)} / ${ms(percentile(directMs, 99))}` },
        { metric: `tools/call get_usage p50 / p99 (${SAMPLES} calls, interleaved)`, value: `${ms(m50)} / ${ms(percentile(mcpMs, 99))}` },
        { metric: 'MCP overhead ratio (p50 tools/call ÷ p50 direct)', value: `${ratio.toFixed(2)}x`, target: `≤ ${TARGET_RATIO}x`, ok: ratio <= TARGET_RATIO },
        { metric: `tools/list p50 (${listMs.length} calls)`, value: ms(percentile(listMs, 50)) },
        {
          metric: `official SDK client callTool(get_usage) p50 / p99 (${SAMPLES} calls)`,
          value: `${ms(percentile(sdkMs, 50))} / ${ms(percentile(sdkMs, 99))}`,
        },
      ],
      notes: [
        'Each tools/call authenticates at /mcp, then runs GET /v1/usage through the same Hono app in-process (the key is vouched for, not looked up again). A plain tools/call (one JSON-RPC request, a name and arguments, no `_meta`, as here) is answered without an SDK server (worker/mcp/plain-tool-call.ts): building the server, connecting it and the SDK’s second check of the request and check of the result, in zod without its compiled checks (workerd allows no eval), cost about a quarter of a millisecond per call. Alternating runs of this bench against the commit before on one machine, tools/call p50 minus direct p50: 0.53 and 0.61 ms before, 0.28 and 0.32 ms after (1.29x, 1.28x → 1.16x, 1.16x). Before that, other plain requests moved to a one-request JSON transport (worker/mcp/json-answer-transport.ts) instead of the SDK’s streamable transport, which parsed each message against the JSON-RPC union again and tested each outgoing message as a result and an error three times: 0.65–0.79 → 0.57–0.61 ms (1.31x → 1.25x).',
        'Since 2026-11-27 a plain 2025-era request is routed without the SDK’s era classifier, a plain tools/call skips the pre-check against the spec schema (the SDK checks it again anyway), and a body with Content-Length is read whole (worker/mcp/plain-request.ts, handler.ts): in a CPU profile of tools/call alone (`--profile`), the classifier’s failed zod parses and the chunk-by-chunk read had taken a tenth of the isolate’s time each, the pre-check a twentieth. Three alternating runs of this bench against the commit before, on a quiet machine: tools/call p50 minus direct p50 went from 0.46, 0.54 and 0.42 ms to 0.42, 0.44 and 0.35 ms (ratio 1.38x, 1.38x, 1.34x → 1.33x, 1.32x, 1.29x). The rest is the SDK’s own work per request (a new Server and transport, its zod checks of the request and the result) and the tool’s second pass through the REST middleware.',
        "Direct calls and tools/call use the same Node HTTP client and keep-alive agent, past wrangler dev's proxy; the official SDK client uses its own fetch-based transport to the same address.",
      ],
    }
  },
}
