/**
 * The fake data centre's TL writer: for any GramJS `Api` object, the bytes its own `getBytes()` gives, written from
 * the same parsed schema (GramJS's `parseTl` over its own `apiTl` and `schemaTl`, as tl/api.js builds its classes)
 * into one buffer.
 *
 * Why: the data centre runs on the machine whose relay and `wrangler dev` the benchmarks measure, and GramJS's
 * generic `getBytes` was a quarter of its busy time in a CPU profile of the beta inbound burst
 * (`RELAY_BENCH_PHASES=beta-throughput RELAY_BENCH_PROFILE=1 npm run bench -- relay`), with much of its garbage:
 * per call it validates every field (only to log), allocates a 4-byte Buffer per field, and recomputes each flags
 * word by scanning every argument. beta's real servers do this work on their own machines, not on the relay's, so
 * a fake that crowds the relay it shares the machine with misstates the relay's figures.
 *
 * Same bytes: each step below mirrors tl/api.js's `getBytes` and `argToBytes` (strings, bytes and dates through the
 * library's own `serializeBytes`/`serializeDate`, longs through the writer GramJS itself uses once tl-longs.ts is
 * installed). An object with an object in a field of lower-case type (GramJS then drops a constructor id: tl/api.js's
 * `buffers.shift()`; see LEFT_TO_LIBRARY) and any object this schema does not name (the library's core types, custom
 * objects) are written by their own `getBytes()`. test/relay/sim/network/beta-dc/tl-writer.test.ts holds the two to the same bytes over
 * what the data centre sends and over generated messages, users and updates.
 */
import apiTl from 'telegram/tl/apiTl'
import { parseTl, serializeBytes, serializeDate } from 'telegram/tl/generationHelpers'
import schemaTl from 'telegram/tl/schemaTl'
import { z } from 'zod'
import { toSignedLittleBuffer } from '../../../beta/tl-longs'

/** An argument as GramJS's schema parser describes it (tl/generationHelpers.js buildArgConfig). */
const ArgConfig = z.object({
  isVector: z.boolean(),
  isFlag: z.boolean(),
  flagName: z.string().nullable(),
  flagIndex: z.number(),
  flagIndicator: z.boolean(),
  type: z.string().nullable(),
  useVectorId: z.boolean().nullable(),
})

/** One definition parseTl yields (it is typed `any`). */
const Definition = z.object({
  name: z.string(),
  namespace: z.string().optional(),
  constructorId: z.number(),
  argsConfig: z.record(z.string(), ArgConfig),
})

type Step =
  | { kind: 'flags'; name: string; bits: Array<{ name: string; bit: number; bool: boolean }>; none: boolean }
  | { kind: 'value'; name: string; type: string; isVector: boolean; useVectorId: boolean; isFlag: boolean }

type Plan = { className: string; id: number; steps: Step[] }

const VECTOR_ID = Buffer.from('15c4b51c', 'hex')
const BOOL_TRUE = Buffer.from('b5757299', 'hex')
const BOOL_FALSE = Buffer.from('379779bc', 'hex')

/** tl/api.js's boxed test for an object field: the type's name (after its namespace) starts in upper case. */
function boxed(type: string): boolean {
  const first = type.charAt(type.indexOf('.') + 1)
  return first === first.toUpperCase()
}

function planOf(def: z.infer<typeof Definition>): Plan {
  const args = Object.entries(def.argsConfig)
  const anyFlag = args.some(([, a]) => a.isFlag)
  const steps: Step[] = []
  for (const [name, a] of args) {
    if (a.flagIndicator) {
      const bits = args.filter(([, f]) => f.isFlag && f.flagName === name).map(([n, f]) => ({ name: n, bit: 1 << f.flagIndex, bool: f.type === 'Bool' }))
      steps.push({ kind: 'flags', name, bits, none: !anyFlag })
      continue
    }
    steps.push({ kind: 'value', name, type: a.type ?? '', isVector: a.isVector, useVectorId: a.useVectorId === true, isFlag: a.isFlag })
  }
  return { className: [def.namespace, def.name].filter(Boolean).join('.'), id: def.constructorId, steps }
}

/** Plans by constructor id, built once from the schema GramJS builds its classes from. */
const plans = new Map<number, Plan>()
for (const content of [apiTl, schemaTl]) {
  // tl/api.js's own call (the layer argument is not read).
  for (const raw of parseTl(content, '109')) {
    const def = Definition.parse(raw)
    plans.set(def.constructorId, planOf(def))
  }
}

/** A growing buffer. */
class Out {
  buf = Buffer.allocUnsafe(512)
  at = 0

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n))
    this.buf.copy(next, 0, 0, this.at)
    this.buf = next
  }

  uint32(n: number): void {
    this.room(4)
    this.at = this.buf.writeUInt32LE(n, this.at)
  }

  int32(n: number): void {
    this.room(4)
    this.at = this.buf.writeInt32LE(n, this.at)
  }

  double(n: number): void {
    this.room(8)
    this.at = this.buf.writeDoubleLE(n, this.at)
  }

  bytes(b: Buffer): void {
    this.room(b.length)
    this.at += b.copy(this.buf, this.at)
  }
}

type TlObject = { CONSTRUCTOR_ID?: unknown; className?: unknown; getBytes(): Buffer }

export function isTlObject(x: unknown): x is TlObject {
  return typeof x === 'object' && x !== null && 'getBytes' in x && typeof x.getBytes === 'function'
}

/** A long as the library's writer takes it (tl/api.js passes whatever the field holds). */
type LongLike = Parameters<typeof toSignedLittleBuffer>[0]

/** The plan for `x`, or null when the library must write it (unknown, or another class under the same id). */
function planFor(x: TlObject): Plan | null {
  const plan = typeof x.CONSTRUCTOR_ID === 'number' ? plans.get(x.CONSTRUCTOR_ID) : undefined
  return plan && plan.className === x.className ? plan : null
}

const LONG_BYTES = { long: 8, int128: 16, int256: 32 }

/** Whether getBytes leaves a flagged field out: false (of a non-Bool type), null or undefined, or a `true` flag. */
const absent = (v: unknown, type: string) => (v === false && type !== 'Bool') || v === null || v === undefined

/** `+x`, which Buffer's writeInt32LE and writeDoubleLE apply to their value first: Number() would take a BigInt, `+` throws. */
function unaryPlus(x: unknown): number {
  if (typeof x === 'bigint') throw new TypeError('Cannot convert a BigInt value to a number')
  return Number(x)
}

/**
 * Thrown where getBytes would do what this writer does not copy: an object in a field of a lower-case (bare or
 * primitive) type, where it drops the first buffer it has gathered (tl/api.js's `buffers.shift()`). The object is
 * then written by the library instead; no constructor of the schema declares a bare object field, so only a value of
 * the wrong type gets here.
 */
const LEFT_TO_LIBRARY = new Error('beta dc: left to the library')

/** argToBytes: one value of `type`. */
function writeValue(out: Out, x: unknown, type: string, owner: string): void {
  switch (type) {
    case 'int':
      out.int32(unaryPlus(x))
      break
    case 'long':
    case 'int128':
    case 'int256':
      out.bytes(toSignedLittleBuffer(x as LongLike, LONG_BYTES[type]))
      break
    case 'double':
      out.double(unaryPlus(x))
      break
    case 'string':
    case 'bytes':
      out.bytes(serializeBytes(x))
      break
    case 'Bool':
      out.bytes(x ? BOOL_TRUE : BOOL_FALSE)
      break
    case 'true':
      break
    case 'date':
      out.bytes(serializeDate(x as number | Date))
      break
    default:
      if (!isTlObject(x)) throw new Error(`Required object ${owner} of ${type} is undefined`)
      writeObject(out, x)
  }
}

function writeObject(out: Out, x: TlObject): void {
  const plan = planFor(x)
  if (!plan) {
    out.bytes(x.getBytes())
    return
  }
  const start = out.at
  try {
    writeFields(out, x, plan)
  } catch (err) {
    if (err !== LEFT_TO_LIBRARY) throw err
    out.at = start
    out.bytes(x.getBytes())
  }
}

function writeFields(out: Out, x: TlObject, plan: Plan): void {
  out.uint32(plan.id)
  for (const step of plan.steps) {
    if (step.kind === 'flags') {
      if (step.none) {
        out.uint32(0)
        continue
      }
      let flags = 0
      for (const f of step.bits) if (!absent(Reflect.get(x, f.name), f.bool ? 'Bool' : '')) flags |= f.bit
      out.uint32(flags)
      continue
    }
    const v: unknown = Reflect.get(x, step.name)
    if (step.isFlag && (absent(v, step.type) || step.type === 'true')) continue
    if (step.isVector) {
      // getBytes maps the value and concatenates: anything but an array throws there.
      if (!Array.isArray(v)) throw new TypeError(`${plan.className}.${step.name} is not a vector`)
      if (step.useVectorId) out.bytes(VECTOR_ID)
      out.int32(v.length)
      for (const item of v) writeValue(out, item, step.type, plan.className)
      continue
    }
    if (!boxed(step.type) && isTlObject(v)) throw LEFT_TO_LIBRARY
    writeValue(out, v, step.type, step.name)
  }
}

/** What `obj.getBytes()` returns, written in one buffer. */
export function tlObjectBytes(obj: TlObject): Buffer {
  const out = new Out()
  writeObject(out, obj)
  return out.buf.subarray(0, out.at)
}
