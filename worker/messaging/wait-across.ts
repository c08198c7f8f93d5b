/**
 * A wait over several accounts: each account's object holds its own wait and the first one with news ends all of
 * them. The caller then reads the answer across all the accounts, so the returned cursor never skips a message of
 * another account. A plain function over `waitOne`, so the model test drives it (test/worker/account/wait-model.test.ts).
 */
import { ApiError } from '../errors'

/** Resolves once one account has news, every wait has returned, or the client left; rejects on a refusal. */
export async function firstNews(
  accountIds: readonly string[],
  waitOne: (accountId: string, signal: AbortSignal) => Promise<{ news: boolean }>,
  clientSignal: AbortSignal
): Promise<void> {
  const stop = new AbortController()
  const onClientGone = () => stop.abort()
  clientSignal.addEventListener('abort', onClientGone, { once: true })
  try {
    await new Promise<void>((resolve, reject) => {
      let pending = accountIds.length
      for (const id of accountIds) {
        waitOne(id, stop.signal).then(
          (answer) => (answer.news || --pending === 0 ? resolve() : undefined),
          (err: unknown) => (err instanceof ApiError ? reject(err) : stop.signal.aborted ? resolve() : reject(err))
        )
      }
    })
  } finally {
    stop.abort()
    clientSignal.removeEventListener('abort', onClientGone)
  }
}
