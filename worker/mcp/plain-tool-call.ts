/**
 * A plain tools/call (plain-request.ts), the request agents make most, answered without building the SDK's `Server`
 * for it: the tool runs as the server would run it (dispatch.ts, the same runner), and the JSON-RPC response is
 * written here, as the SDK writes it.
 *
 * Why: for every other request /mcp builds a `Server`, connects it to a transport and lets the SDK dispatch. For a
 * tools/call that costs, per call, the server's construction and handler table, its connection, a second check of
 * the request against the spec's CallToolRequest and a check of the result against CallToolResult, both in zod,
 * which cannot compile its checks in workerd. Measured with `npm run bench -- mcp` (tools/call p50 minus the direct
 * GET's p50, 2026-11-28): 0.48 and 0.77 ms through the SDK, 0.31 and 0.35 ms here. None of those checks can fail
 * for a plain call: handler.ts has found a JSON-RPC request with an id, a string name, an arguments object and
 * nothing else, and dispatch.ts builds every result in the shape CallToolResult gives (text, image and audio blocks
 * and isError). Every other request, tools/list and the Events methods included, still goes through the SDK.
 *
 * Same answers: a result as the SDK's response (`result`, `jsonrpc`, `id`); an unknown tool as server.ts's -32602;
 * a thrown error as the SDK's Protocol answers it (its `code` when a safe integer, else -32603 Internal error, with
 * the 2025 era's -32002 sent as -32602; its `message`; its `data` when set). test/worker/mcp/plain-tool-call.test.ts
 * holds every answer to the SDK server's (buildServer on the one-request transport) for the same call.
 */
import { ProtocolErrorCode, type JSONRPCRequest } from '@modelcontextprotocol/server'
import { jsonRpcAnswer } from './json-answer-transport'
import { type CheckedCall, isRecord, type ToolRunner, unknownTool } from './server'
import { toolNamed } from './tools'

type Id = JSONRPCRequest['id']

/** The SDK's error response for what a request handler threw (Protocol._onrequest, 2025-era codec). */
function errorResponse(id: Id, thrown: unknown): Response {
  const err = isRecord(thrown) ? thrown : {}
  const code = 'code' in err && Number.isSafeInteger(err.code) ? Number(err.code) : ProtocolErrorCode.InternalError
  const message = 'message' in err && err.message !== undefined && err.message !== null ? err.message : 'Internal error'
  const data = 'data' in err ? err.data : undefined
  return jsonRpcAnswer({
    jsonrpc: '2.0',
    id,
    error: { code: code === -32002 ? ProtocolErrorCode.InvalidParams : code, message, ...(data !== undefined && { data }) },
  })
}

/** The response to a plain tools/call: its tool's result, or the SDK's error. `signal` ends the tool's REST call. */
export async function answerPlainToolCall(id: Id, call: CheckedCall, run: ToolRunner, signal: AbortSignal): Promise<Response> {
  try {
    const tool = toolNamed(call.name)
    if (!tool) throw unknownTool(call.name)
    return jsonRpcAnswer({ result: await run(tool, call.arguments, signal), jsonrpc: '2.0', id })
  } catch (err) {
    return errorResponse(id, err)
  }
}
