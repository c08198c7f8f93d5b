/**
 * The companion half of alpha's passkey ("shortcake") linking for one linking socket, in whatsmeow's order
 * (`pair-passkey.go`): the server's `passkey_prologue_request` (options inline, or fetched with an IQ) → the owner's
 * assertion, made in their browser and relayed by the edge → `ref`, then `passkey_prologue` with a fresh ephemeral
 * identity, its commitment and the handoff proof → the server's `crsc_continuation` with the primary's identity →
 * `companion_nonce`, the code and the pairing key → (the owner's "the codes match", when alpha asks for it) →
 * `encrypted_pairing_request` → the usual `pair-success`, which Baileys handles.
 *
 * Every wait has its own deadline and ends in a named problem (passkey_expired: the owner; passkey_timeout: alpha or
 * the phone; passkey_rejected: alpha said no). A failed step is never tried again: the socket ends and the session
 * stops until someone starts linking again (docs/channels/alpha.md).
 */
import type { BinaryNode } from '@whiskeysockets/baileys'
import { proto } from '@whiskeysockets/baileys'
import type { Logger } from 'pino'
import { parsePasskeyOptions } from '../../schema/passkey'
import type { LoginOutcome, LoginStep, SessionState } from '../connector'
import {
  companionEphemeral,
  encryptedPairingRequest,
  handoffKey,
  handoffProof,
  newAdvSecret,
  pairingKey,
  passkeyCode,
  PASSKEY_HANDOFF_TTL_MS,
  primaryEphemeral,
  type CompanionEphemeral,
} from './passkey-crypto'
import * as stanza from './passkey-stanzas'

/** The owner's time for the assertion when the options name none; alpha's own is 10 minutes (its `timeout`). */
export const PASSKEY_ASSERTION_DEFAULT_MS = 5 * 60_000
export const PASSKEY_ASSERTION_MAX_MS = 10 * 60_000
/** One IQ of the ceremony (Baileys' query times out on its own after this). */
export const PASSKEY_IQ_TIMEOUT_MS = 15_000
/** After the prologue: the phone's answer (its owner may have to act on it). */
export const PASSKEY_CONTINUATION_WAIT_MS = 3 * 60_000
/** The owner's "the codes match", when alpha did not skip that step. */
export const PASSKEY_CONFIRM_WAIT_MS = 5 * 60_000
/** After the encrypted pairing request: the phone's `pair-success`. */
export const PASSKEY_PAIR_WAIT_MS = 3 * 60_000

/** The companion platform announced in the ephemeral identity: what `ALPHA_BROWSER` registers as (Baileys: Chrome). */
export const PASSKEY_DEVICE_TYPE = proto.DeviceProps.PlatformType.CHROME

export type PasskeyProblem = 'passkey_expired' | 'passkey_rejected' | 'passkey_timeout'

/** Baileys' creds of the linking socket (the one object Baileys itself reads, so a change is seen by pair-success). */
export type PasskeyCreds = {
  noiseKey: { public: Uint8Array }
  signedIdentityKey: { public: Uint8Array }
  /** Base64, as Baileys keeps it. */
  advSecretKey: string
}

export type PasskeyDeps = {
  /** Baileys' `query`: resolves with the answer, or undefined when its wait ran out; throws on `<error>` (a Boom with `data` the code). */
  query(node: BinaryNode, timeoutMs: number): Promise<BinaryNode | undefined>
  creds: PasskeyCreds
  emit(state: SessionState): void
  /** Ends the ceremony for good: the socket ends and the session reports `problem`. */
  fail(problem: PasskeyProblem, detail: string): void
  now(): number
  log: Logger
}

type Stage =
  | { kind: 'idle' }
  | { kind: 'assertion'; options: string; expiresAt: number; handoff: { key: Buffer; at: number } | null }
  | { kind: 'prologue' }
  | { kind: 'continuation'; companion: CompanionEphemeral; skipCode: boolean }
  | { kind: 'nonce' }
  | { kind: 'confirm'; key: Buffer; code: string }
  | { kind: 'pairing' }
  | { kind: 'over' }

export type PasskeyFlow = {
  onNotification(node: BinaryNode): void
  /** The owner's assertion, then their "the codes match"; refused when the ceremony is not waiting for that step. */
  submit(step: LoginStep): Promise<LoginOutcome>
  /** A ceremony is under way: the socket closing now ends it (passkey_timeout). */
  readonly active: boolean
  /** Pair-success came, or the socket closed: no more steps, no more deadlines. */
  stop(): void
}

const refused = (message: string): LoginOutcome => ({ status: 'refused', error: 'no_login_pending', message, retryAfterS: null })
/** The step reached alpha and the ceremony ended on it; the session state says how (passkey_rejected, passkey_timeout). */
const failed = (message: string): LoginOutcome => ({ status: 'refused', error: 'login_failed', message, retryAfterS: null })

/** A query that failed: alpha's `<error code>` (Baileys' Boom `data`) is a refusal; no answer, or a closed socket, a timeout. */
function failure(err: unknown): { problem: PasskeyProblem; detail: string } {
  const message = err instanceof Error ? err.message : String(err)
  const output = err instanceof Error && 'output' in err && typeof err.output === 'object' && err.output !== null ? err.output : null
  const status = output && 'statusCode' in output ? output.statusCode : null
  // Baileys' timeouts and a socket that closed under the query (DisconnectReason.timedOut, connectionClosed).
  if (status === 408 || status === 428) return { problem: 'passkey_timeout', detail: message }
  const code = err instanceof Error && 'data' in err && typeof err.data === 'number' ? ` (${err.data})` : ''
  return { problem: 'passkey_rejected', detail: `${message}${code}` }
}

export function makePasskeyFlow(deps: PasskeyDeps): PasskeyFlow {
  let stage: Stage = { kind: 'idle' }
  let timer: ReturnType<typeof setTimeout> | null = null

  function wait(ms: number, problem: PasskeyProblem, detail: string) {
    if (timer) clearTimeout(timer)
    timer = setTimeout(() => end(problem, detail), ms)
  }

  function end(problem: PasskeyProblem, detail: string) {
    if (stage.kind === 'over') return
    stop()
    deps.log.warn({ problem, detail }, 'alpha passkey ceremony failed; not retried')
    deps.fail(problem, detail)
  }

  // A function, not a narrowed read: `stage` changes across every await.
  const isOver = () => stage.kind === 'over'

  function stop() {
    stage = { kind: 'over' }
    if (timer) clearTimeout(timer)
    timer = null
  }

  /** One IQ of the ceremony; its answer, or null when the ceremony ended (this failure, or a stop meanwhile). */
  async function ask(node: BinaryNode, what: string): Promise<BinaryNode | null> {
    try {
      const answer = await deps.query(node, PASSKEY_IQ_TIMEOUT_MS)
      if (isOver()) return null
      if (answer) return answer
      end('passkey_timeout', `${what}: no answer`)
    } catch (err) {
      const f = failure(err)
      end(f.problem, `${what}: ${f.detail}`)
    }
    return null
  }

  async function onPrologueRequest(node: BinaryNode) {
    if (stage.kind !== 'idle' && stage.kind !== 'assertion')
      return void deps.log.warn({ stage: stage.kind }, 'alpha passkey: a second prologue request mid-ceremony; ignored')
    // whatsmeow derives the handoff key from the ADV secret the phone got with the QR code (or the pairing code), now.
    const handoff = { key: handoffKey(Buffer.from(deps.creds.advSecretKey, 'base64')), at: deps.now() }
    stage = { kind: 'prologue' }
    let options = stanza.requestOptionsOf(node)
    if (options === null || parsePasskeyOptions(options) === null) {
      deps.log.warn({ inline: options !== null }, 'alpha passkey: the notification has no usable request options; asking for them')
      const answer = await ask(stanza.requestOptionsRequest(), 'passkey_request_options')
      if (!answer) return
      options = stanza.requestOptionsOf(answer)
    }
    const parsed = options === null ? null : parsePasskeyOptions(options)
    if (options === null || parsed === null) return end('passkey_rejected', 'alpha sent no usable passkey request options')
    const expiresAt = deps.now() + Math.min(parsed.timeout ?? PASSKEY_ASSERTION_DEFAULT_MS, PASSKEY_ASSERTION_MAX_MS)
    stage = { kind: 'assertion', options, expiresAt, handoff }
    wait(expiresAt - deps.now(), 'passkey_expired', 'no assertion from the owner')
    deps.log.info({ rpId: parsed.rpId ?? null, expiresAt }, 'alpha passkey: waiting for the owner’s assertion')
    deps.emit({ state: 'passkey_required', requestOptions: options, expiresAt })
  }

  async function onAssertion(step: Extract<LoginStep, { kind: 'passkey_assertion' }>): Promise<LoginOutcome> {
    if (stage.kind !== 'assertion') return refused('No passkey ceremony waits for an assertion on this session.')
    const { handoff } = stage
    stage = { kind: 'prologue' }
    if (timer) clearTimeout(timer)
    const refAnswer = await ask(stanza.refRequest(), 'ref')
    if (!refAnswer) return failed('alpha did not take the passkey; the session state says why.')
    const ref = stanza.refOf(refAnswer)
    if (!ref) {
      end('passkey_rejected', 'ref: no ref in the answer')
      return failed('alpha did not take the passkey; the session state says why.')
    }
    const companion = companionEphemeral(ref, PASSKEY_DEVICE_TYPE)
    const proof = handoff && deps.now() - handoff.at < PASSKEY_HANDOFF_TTL_MS ? handoffProof(handoff.key, companion.prologuePayload) : null
    // Ready for the continuation before the prologue goes out, as whatsmeow keeps its linking cache: the phone's
    // answer may come in before the prologue's IQ result does.
    const waiting: Stage = { kind: 'continuation', companion, skipCode: proof !== null }
    stage = waiting
    const accepted = await ask(
      stanza.prologueRequest({ assertion: step.assertion, prologuePayload: companion.prologuePayload, handoffProof: proof }),
      'passkey_prologue'
    )
    if (!accepted) return failed('alpha did not take the passkey; the session state says why.')
    deps.log.info({ handoffProof: proof !== null }, 'alpha passkey: prologue accepted; waiting for the phone')
    if (stage === waiting) {
      wait(PASSKEY_CONTINUATION_WAIT_MS, 'passkey_timeout', 'no continuation from the phone')
      deps.emit({ state: 'connecting' })
    }
    return { status: 'accepted' }
  }

  async function onContinuation(node: BinaryNode) {
    if (stage.kind !== 'continuation') {
      if (stage.kind === 'idle' || stage.kind === 'assertion') end('passkey_rejected', 'a continuation came before the prologue')
      else deps.log.warn({ stage: stage.kind }, 'alpha passkey: a repeated continuation; ignored')
      return
    }
    const { companion, skipCode } = stage
    stage = { kind: 'nonce' }
    let primary: ReturnType<typeof primaryEphemeral>
    try {
      const raw = stanza.primaryIdentityOf(node)
      if (!raw) throw new Error('no primary_ephemeral_identity')
      primary = primaryEphemeral(raw)
    } catch (err) {
      return end('passkey_rejected', `continuation: ${err instanceof Error ? err.message : String(err)}`)
    }
    if (!(await ask(stanza.nonceRequest(companion.nonce), 'companion_nonce'))) return
    const key = pairingKey(companion, primary)
    const code = passkeyCode(companion.nonce, primary)
    if (skipCode) return void (await pair(key, code))
    stage = { kind: 'confirm', key, code }
    const expiresAt = deps.now() + PASSKEY_CONFIRM_WAIT_MS
    wait(PASSKEY_CONFIRM_WAIT_MS, 'passkey_expired', 'the owner did not confirm the code')
    deps.emit({ state: 'passkey_code', code, confirm: true, expiresAt })
  }

  /** whatsmeow `SendPasskeyConfirmation`: the pairing request under the pairing key, with a new ADV secret. */
  async function pair(key: Buffer, code: string): Promise<boolean> {
    stage = { kind: 'pairing' }
    const advSecret = newAdvSecret()
    const request = encryptedPairingRequest(key, {
      noisePublic: deps.creds.noiseKey.public,
      identityPublic: deps.creds.signedIdentityKey.public,
      advSecret,
    })
    // pair-success is signed with the secret the phone gets now; Baileys checks it against these creds.
    deps.creds.advSecretKey = advSecret.toString('base64')
    deps.emit({ state: 'passkey_code', code, confirm: false, expiresAt: deps.now() + PASSKEY_PAIR_WAIT_MS })
    if (!(await ask(stanza.pairingRequest(request), 'encrypted_pairing_request'))) return false
    // pair-success may already have come (and stopped the ceremony) while the answer was on its way.
    if (stage.kind === 'pairing') wait(PASSKEY_PAIR_WAIT_MS, 'passkey_timeout', 'no pair-success from the phone')
    deps.log.info('alpha passkey: pairing request accepted; waiting for pair-success')
    return true
  }

  return {
    onNotification(node) {
      if (!stanza.fromServer(node)) return void deps.log.warn({ from: node.attrs.from }, 'alpha passkey: a notification not from the server; ignored')
      const run = node.attrs.type === stanza.PASSKEY_PROLOGUE_REQUEST ? onPrologueRequest(node) : onContinuation(node)
      run.catch((err: unknown) => end('passkey_rejected', err instanceof Error ? err.message : String(err)))
    },
    async submit(step) {
      if (step.kind === 'passkey_assertion') return onAssertion(step)
      if (step.kind === 'passkey_confirm') {
        if (stage.kind !== 'confirm') return refused('No passkey code waits for the owner’s confirmation on this session.')
        return (await pair(stage.key, stage.code)) ? { status: 'accepted' } : failed('alpha did not take the pairing request; the session state says why.')
      }
      return refused('alpha links with a QR code or a pairing code, not with this step.')
    },
    get active() {
      return stage.kind !== 'idle' && stage.kind !== 'over'
    },
    stop,
  }
}
