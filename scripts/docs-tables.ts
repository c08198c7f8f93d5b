/**
 * The tables of the docs that would drift if typed by hand, rendered from the code's own constants and schemas and
 * written between markers (`<!-- generated:NAME -->` … `<!-- /generated:NAME -->`): the abuse limits
 * (worker/lib/abuse-limits.ts, worker/relay/budgets.ts), the error codes (worker/lib/error-codes.ts) and the webhook
 * events with their payload fields (schema/events.ts). `npm run docs` writes them; `npm run docs -- --check` (and
 * test/scripts/docs-tables.test.ts, in `npm test`) fails when a page is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { z } from 'zod'
import { AccountEventPayload, DeliveryIdentity, EVENT_DESCRIPTIONS, EVENT_TYPES, EXTENSION_EVENT_TYPES, MessageEventPayload } from '../schema/events'
import { GATEWAY_WEBHOOK_MAX_BYTES, MAX_BODY_BYTES, MCP_MAX_BODY_BYTES, RATE_LIMITS, REPLAYS_PER_HOUR } from '../worker/lib/abuse-limits'
import { ERROR_CODES, MESSAGING_ROUTE_PREFIXES, type ErrorCodeInfo, type ErrorFamilyShown } from '../worker/lib/error-codes'
import { ListMessagesQuery, MAX_TEXT_CHARS, Message, WAIT_MAX_S } from '../schema/api/messages'
import { LOOP_GUARD_SENDS, OPENER_BURST_MAX, OPENER_WINDOW_MS } from '../worker/account/guards'
import { RAMP_SILENT_DAYS } from '../worker/account/ramp'
import { WAIT_SLOTS_PER_ACCOUNT } from '../worker/account/waits'
import { PLANS, type Plan } from '../worker/plans'
import { HELLO_SESSIONS_MAX, INBOUND_BUFFER_MAX, RELAY_LINKS_PER_TOKEN } from '../worker/relay/budgets'

/** What the renderers read; a test passes a changed copy to show that a change reaches the docs. */
export type DocSources = {
  rateLimits: typeof RATE_LIMITS
  errorCodes: Record<string, ErrorCodeInfo>
  plan: Plan
}

export const SOURCES: DocSources = { rateLimits: RATE_LIMITS, errorCodes: ERROR_CODES, plan: PLANS.free }

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ')
const table = (head: string[], rows: string[][]) =>
  [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)].join('\n')
const bytes = (n: number) => (n >= 1024 * 1024 ? `${n / (1024 * 1024)} MiB` : `${n / 1024} KiB`)
const period = (s: number) => (s === 60 ? 'minute' : `${s} s`)
const thousands = (n: number) => n.toLocaleString('en-US')

export function renderAbuseLimits(src: DocSources = SOURCES): string {
  const rl = Object.values(src.rateLimits).map((r) => [
    r.what,
    `${thousands(r.limit)} per ${period(r.periodS)}`,
    r.per,
    r.headers === false ? '— (before a key is accepted)' : `\`"${r.policy}"\``,
  ])
  return table(
    ['What', 'Limit', 'Counted per', '`RateLimit` policy'],
    [
      ...rl,
      ['`POST /v1/webhooks/{webhookId}/replay`', `one at a time; ${REPLAYS_PER_HOUR} per hour`, 'subscription', '—'],
      ['request bodies under `/v1` and `/admin` (413 `body_too_large`)', bytes(MAX_BODY_BYTES), 'request, streamed ones too', '—'],
      ['request bodies on `/mcp`', bytes(MCP_MAX_BODY_BYTES), 'request, streamed ones too', '—'],
      ['the phone’s webhook (`/v1/channels/sms/android-gateway/…/events`: an MMS carries its files base64)', bytes(GATEWAY_WEBHOOK_MAX_BYTES), 'request', '—'],
      ['live WebSocket links of a relay token (429 beyond)', String(RELAY_LINKS_PER_TOKEN), 'relay token', '—'],
      ['sessions listed in one relay `hello` (close 4002 beyond)', thousands(HELLO_SESSIONS_MAX), 'link', '—'],
      ['inbound frames buffered per session (beyond: not acked, the relay sends again)', thousands(INBOUND_BUFFER_MAX), 'session', '—'],
    ]
  )
}

/** The limits that protect a number: per account and UTC day, from the plan table and the send guards. */
export function renderAccountLimits(src: DocSources = SOURCES): string {
  const p = src.plan
  const page = z.toJSONSchema(ListMessagesQuery).properties?.limit as { maximum?: number; default?: number } | undefined
  const fullDay = RAMP_SILENT_DAYS + p.newContactsPerDay
  return table(
    ['Limit', 'Rule'],
    [
      [
        'Accounts',
        `${p.accountsCap} connected account per tenant (\`accounts_cap\`). Accounts that are connected, being connected or restricted hold a place (the custom channel counts); a disconnected one does not block connecting another, and still counts in \`accounts_total\` until removed. Two connects racing for the last place cannot both pass (409 \`account_cap_reached\`)`,
      ],
      ['Sends', `${p.sendsPerDay} per account per UTC day (\`daily_send_cap\`), on every channel`],
      [
        'New contacts',
        `${p.newContactsPerDay} per account per UTC day (\`new_contact_cap\`). A new contact is a person who never wrote to the account and was never messaged by it; replies to people who wrote first never count`,
      ],
      ['Loop guard', `at most ${LOOP_GUARD_SENDS} messages to one person since their last message (\`loop_guard\`); their next message resets it`],
      [
        'Opener burst',
        `the same first message (case and spacing ignored) to more than ${OPENER_BURST_MAX} never-written people within ${OPENER_WINDOW_MS / 60_000} minutes is refused and suspends sending (\`opener_burst\`, then \`account_suspended\` until the service reviews it)`,
      ],
      [
        'alpha warm-up',
        `\`ramp_day\` counts the UTC days on which the number was connected (day 1 while it is still connecting). Days 1–${RAMP_SILENT_DAYS}: 0 new contacts; from day ${RAMP_SILENT_DAYS + 1} the allowance is \`ramp_day − ${RAMP_SILENT_DAYS}\` up to the plan cap (day ${RAMP_SILENT_DAYS + 1} → 1 … day ${fullDay} → ${p.newContactsPerDay}). Replies are not limited`,
      ],
      ['Text', `1 to ${MAX_TEXT_CHARS} characters; at most one \`media_url\` (https)`],
      ['Waits', `${WAIT_SLOTS_PER_ACCOUNT} open \`GET /v1/messages/wait\` per account (\`wait_concurrency\`); \`timeout_s\` 0 to ${WAIT_MAX_S}`],
      ['Pages', `\`GET /v1/messages\`: \`limit\` 1 to ${page?.maximum}, default ${page?.default}`],
    ]
  )
}

const FAMILY_LABEL: Record<ErrorFamilyShown, string> = { messaging: 'code', status: 'status', mcp: 'MCP' }

export function renderErrors(src: DocSources = SOURCES): string {
  const rows = Object.entries(src.errorCodes)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([code, e]) => [`\`${code}\``, e.status.join(', '), e.family.map((f) => FAMILY_LABEL[f]).join(', '), e.when])
  return table(['Code', 'HTTP', 'Shown as', 'When'], rows)
}

export function renderErrorFamilies(): string {
  return `Routes under ${MESSAGING_ROUTE_PREFIXES.map((p) => `\`${p}\``).join(', ')} answer the first shape (a string \`error_code\`); every other route (\`/v1/keys\`, \`/v1/media\`, \`/v1/webhooks\`, \`/v1/channels/…\`, \`/admin\`, hosted pages, provider callbacks) the second, with the HTTP status as \`error_code\`.`
}

type FieldRow = { path: string; type: string; description: string }

/** The description a schema (or any of its optional/nullable wrappers) carries. */
function describe(schema: z.ZodType): string | undefined {
  return (schema.meta() as { description?: string } | undefined)?.description
}

function typeOf(schema: z.ZodType): string {
  const json = z.toJSONSchema(schema, { unrepresentable: 'any' }) as { type?: string; format?: string; enum?: unknown[] }
  if (json.enum) return json.enum.length <= 8 ? json.enum.map((v) => `\`${String(v)}\``).join(', ') : 'string'
  if (json.format === 'date-time') return 'date-time'
  return json.type ?? 'any'
}

/** One row per field of an object schema, nested objects flattened as `a.b`. */
export function fieldRows(schema: z.ZodType, prefix = ''): FieldRow[] {
  if (!(schema instanceof z.ZodObject)) return []
  return Object.entries(schema.shape as Record<string, z.ZodType>).flatMap(([name, field]) => {
    let s = field
    let nullable = false
    let optional = false
    let description = describe(s)
    for (;;) {
      if (s instanceof z.ZodOptional) optional = true
      else if (s instanceof z.ZodNullable) nullable = true
      else break
      s = s.unwrap() as z.ZodType
      description ??= describe(s)
    }
    const path = `${prefix}${name}`
    const type = `${s instanceof z.ZodObject ? 'object' : typeOf(s)}${nullable ? ' or null' : ''}${optional ? ', optional' : ''}`
    const row = { path: `\`${path}\``, type, description: description ?? '' }
    return s instanceof z.ZodObject ? [row, ...fieldRows(s, `${path}.`)] : [row]
  })
}

export function renderEvents(): string {
  const events = [...EVENT_TYPES, ...EXTENSION_EVENT_TYPES].map((e) => [`\`${e}\``, EVENT_DESCRIPTIONS[e], e.startsWith('message.') ? 'message' : 'account'])
  const fields = (schema: z.ZodType) =>
    table(
      ['Field', 'Type', 'Notes'],
      [...fieldRows(schema), ...fieldRows(DeliveryIdentity)].map((r) => [r.path, r.type, r.description])
    )
  return [
    table(['Event', 'When', 'Payload'], events),
    '',
    '**Message payload** (every `message.*` event):',
    '',
    fields(MessageEventPayload),
    '',
    '**Account payload** (every `account.*` event):',
    '',
    fields(AccountEventPayload),
  ].join('\n')
}

export function renderMessageObject(): string {
  return table(
    ['Field', 'Type', 'Notes'],
    fieldRows(Message).map((r) => [r.path, r.type, r.description])
  )
}

export type Section = { file: string; name: string; render: (src: DocSources) => string }

export const SECTIONS: readonly Section[] = [
  { file: 'docs/api.md', name: 'account-limits', render: renderAccountLimits },
  { file: 'docs/api.md', name: 'abuse-limits', render: renderAbuseLimits },
  { file: 'docs/errors.md', name: 'error-families', render: renderErrorFamilies },
  { file: 'docs/errors.md', name: 'errors', render: renderErrors },
  { file: 'docs/webhooks.md', name: 'events', render: renderEvents },
  { file: 'docs/messages.md', name: 'message-object', render: renderMessageObject },
]

const MARKERS = (name: string) => new RegExp(`(<!-- generated:${name} [^>]*-->\\n)([\\s\\S]*?)(<!-- /generated:${name} -->)`)

/** The page with one section replaced; throws when the page lacks its markers. */
export function withSection(page: string, file: string, name: string, body: string): string {
  const m = MARKERS(name).exec(page)
  if (!m) throw new Error(`${file}: no <!-- generated:${name} … --> … <!-- /generated:${name} --> markers`)
  return page.replace(MARKERS(name), (_, open: string, _old: string, close: string) => `${open}${body}\n${close}`)
}

/** Every section whose page differs from a fresh render; with `write`, the pages are rewritten. */
export function staleSections(root: string, opts: { write?: boolean; sources?: DocSources } = {}): string[] {
  const stale: string[] = []
  const pages = new Map<string, string>()
  for (const s of SECTIONS) {
    const before = pages.get(s.file) ?? readFileSync(join(root, s.file), 'utf8')
    const after = withSection(before, s.file, s.name, s.render(opts.sources ?? SOURCES))
    if (after !== before) stale.push(`${s.file}#${s.name}`)
    pages.set(s.file, after)
  }
  if (opts.write) for (const [file, text] of pages) writeFileSync(join(root, file), text)
  return stale
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = join(import.meta.dirname, '..')
  const check = process.argv.includes('--check')
  const stale = staleSections(root, { write: !check })
  if (check && stale.length > 0) {
    console.error(`Stale generated docs (run npm run docs): ${stale.join(', ')}`)
    process.exit(1)
  }
  console.log(stale.length ? `rewrote ${stale.join(', ')}` : 'generated docs are current')
}
