/**
 * What a beta session refetches when the update gap is longer than beta keeps (updates.differenceTooLong,
 * catch-up.ts): the recent dialogs (messages.getDialogs), the newest messages of each (messages.getHistory) that came
 * in since the session's last known date, oldest first, and each dialog's read mark as a read-outbox update. The edge
 * de-duplicates the messages it already has by their upstream id.
 */
import bigInt from 'big-integer'
import { Api } from 'telegram'

/** This many recent dialogs, and this many newest messages of each, are refetched. */
export const RECOVER_DIALOGS = 100
export const RECOVER_MESSAGES = 100

export type RecentHistory = { messages: Api.Message[]; reads: Api.UpdateReadHistoryOutbox[]; users: Api.TypeUser[] }

export async function recentHistory(invoke: (r: Api.AnyRequest) => Promise<unknown>, sinceDate: number, pts: number): Promise<RecentHistory> {
  const dialogs = await invoke(
    new Api.messages.GetDialogs({ offsetDate: 0, offsetId: 0, offsetPeer: new Api.InputPeerEmpty(), limit: RECOVER_DIALOGS, hash: bigInt.zero })
  )
  const out: RecentHistory = { messages: [], reads: [], users: [] }
  if (!(dialogs instanceof Api.messages.Dialogs || dialogs instanceof Api.messages.DialogsSlice)) return out
  out.users.push(...dialogs.users)
  for (const dialog of dialogs.dialogs) {
    if (!(dialog instanceof Api.Dialog) || !(dialog.peer instanceof Api.PeerUser)) continue
    const userId = dialog.peer.userId
    const user = dialogs.users.find((u): u is Api.User => u instanceof Api.User && u.id.equals(userId))
    if (!user?.accessHash) continue
    const history = await invoke(
      new Api.messages.GetHistory({
        peer: new Api.InputPeerUser({ userId, accessHash: user.accessHash }),
        offsetId: 0,
        offsetDate: 0,
        addOffset: 0,
        limit: RECOVER_MESSAGES,
        maxId: 0,
        minId: 0,
        hash: bigInt.zero,
      })
    )
    if (history instanceof Api.messages.Messages || history instanceof Api.messages.MessagesSlice) {
      out.users.push(...history.users)
      for (const m of history.messages) if (m instanceof Api.Message && !m.out && m.date >= sinceDate) out.messages.push(m)
    }
    if (dialog.readOutboxMaxId > 0) out.reads.push(new Api.UpdateReadHistoryOutbox({ peer: dialog.peer, maxId: dialog.readOutboxMaxId, pts, ptsCount: 0 }))
  }
  out.messages.sort((a, b) => a.date - b.date || a.id - b.id)
  return out
}
