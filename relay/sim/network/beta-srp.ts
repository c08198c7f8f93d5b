/**
 * The server half of beta's two-step password (core.telegram.org/api/srp): a fresh SRP challenge per
 * account.GetPassword (the verifier derived with GramJS's own `computeDigest`, so the client's `computeCheck` is the
 * real library code under test), and the check of the proof auth.CheckPassword carries. Each challenge is single use.
 */
import { createHash, randomBytes } from 'node:crypto'
import bigInt from 'big-integer'
import { Api } from 'telegram'
import { computeDigest } from 'telegram/Password'

/** beta's SRP group: the 2048-bit safe prime GramJS accepts (telegram/Password.js checkPrimeAndGood), g = 3. */
const PRIME_HEX =
  'c71caeb9c6b1c9048e6c522f70f13f73980d40238e3e21c14934d037563d930f48198a0aa7c14058229493d22530f4dbfa336f6e0ac925139543aed44cce7c3720fd51f69458705ac68cd4fe6b6b13abdc9746512969328454f18faf8c595f642477fe96bb2a941d5bcd1d4ac8cc49880708fa9b378e3c4f3a9060bee67cf9a4a4a695811051907e162753b56b0f6b410dba74d8a84b2a14b3144e0ef1284754fd17ed950d5965b4b9dd46582db1178d169c6bc465b0d6ff9ca3928fef5b9ae4e418fc15e83ebea0f87fa9ff5eed70050ded2849f47bf959d956850ce929851f0d8115f635b105ee2e4e15d04b2454bf6f4fadf034b10403119cd8e3b92fcc5b'
const P = BigInt(`0x${PRIME_HEX}`)
const G = 3n

function modPow(base: bigint, exp: bigint, mod: bigint): bigint {
  let result = 1n
  let b = base % mod
  let e = exp
  while (e > 0n) {
    if (e & 1n) result = (result * b) % mod
    b = (b * b) % mod
    e >>= 1n
  }
  return result
}
const toBig = (buf: Buffer) => BigInt(`0x${buf.toString('hex') || '0'}`)
const pad256 = (n: bigint) => Buffer.from(n.toString(16).padStart(512, '0'), 'hex')
const sha256 = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest()

type Challenge = { b: bigint; B: bigint; v: bigint; algo: Api.PasswordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow; owner: string }

/** Open challenges by srp_id; `owner` is whatever the caller ties the password to (a user id). */
export class SrpVerifier {
  private readonly open = new Map<string, Challenge>()

  /** The account.Password answer for an account with this password: a new challenge each time. */
  async challenge(owner: string, password: string, hint: string | null): Promise<Api.account.Password> {
    const algo = new Api.PasswordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow({
      salt1: randomBytes(40),
      salt2: randomBytes(16),
      g: Number(G),
      p: Buffer.from(PRIME_HEX, 'hex'),
    })
    const v = toBig(await computeDigest(algo, password))
    const b = toBig(randomBytes(256))
    const k = toBig(sha256(pad256(P), pad256(G)))
    const B = (k * v + modPow(G, b, P)) % P
    const srpId = bigInt(toBig(randomBytes(7)).toString())
    this.open.set(srpId.toString(), { b, B, v, algo, owner })
    return new Api.account.Password({
      hasPassword: true,
      currentAlgo: algo,
      srp_B: pad256(B),
      srpId,
      hint: hint ?? undefined,
      newAlgo: new Api.PasswordKdfAlgoUnknown(),
      newSecureAlgo: new Api.SecurePasswordKdfAlgoUnknown(),
      secureRandom: randomBytes(32),
    })
  }

  /** The owner whose password the proof shows, or null: M1 = H(H(p)^H(g) | H(s1) | H(s2) | A | B | K). */
  verify(check: Api.TypeInputCheckPasswordSRP): string | null {
    if (!(check instanceof Api.InputCheckPasswordSRP)) return null
    const srp = this.open.get(check.srpId.toString())
    if (!srp) return null
    this.open.delete(check.srpId.toString())
    const A = toBig(Buffer.from(check.A))
    if (A <= 0n || A >= P) return null
    const u = toBig(sha256(pad256(A), pad256(srp.B)))
    const S = modPow((A * modPow(srp.v, u, P)) % P, srp.b, P)
    const K = sha256(pad256(S))
    const hp = sha256(pad256(P))
    const hg = sha256(pad256(G))
    const x = Buffer.from(hp.map((byte, i) => byte ^ hg[i]!))
    const M1 = sha256(x, sha256(srp.algo.salt1), sha256(srp.algo.salt2), pad256(A), pad256(srp.B), K)
    return M1.equals(Buffer.from(check.M1)) ? srp.owner : null
  }
}
