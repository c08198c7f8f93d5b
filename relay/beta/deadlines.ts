/**
 * Deadlines around GramJS, which has none (a call on a dead sender, a connect to a silent server, a download part
 * that never comes all wait forever): the errors the driver reads as transient, and a promise deadline.
 */

export class BetaTimeoutError extends Error {
  override name = 'BetaTimeoutError'
}
export class BetaLinkDownError extends Error {
  override name = 'BetaLinkDownError'
}

export function withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new BetaTimeoutError(`beta: ${what} timed out after ${ms} ms`)), ms)
    p.then(
      (v) => (clearTimeout(t), resolve(v)),
      (e: unknown) => (clearTimeout(t), reject(e))
    )
  })
}
