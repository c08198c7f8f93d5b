/**
 * The hosted approval page (docs/agent-safety.md): the held message, whom it goes to and from which account, and
 * two buttons. Plain HTML with no script; the buttons post the signed token back, so opening the link (as a mail
 * scanner or a chat preview does) decides nothing.
 */
const esc = (s: unknown) => String(s ?? '').replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!)

const STYLE = `body{font-family:system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1b1b1b}
h1{font-size:1.35rem}.card{border:1px solid #ddd;border-radius:.6rem;padding:1rem 1.2rem;margin:1rem 0}
.text{white-space:pre-wrap;background:#f6f6f6;border-radius:.4rem;padding:.8rem}dl{display:grid;grid-template-columns:auto 1fr;gap:.3rem 1rem}
dt{color:#666}button{font-size:1rem;padding:.6rem 1.4rem;border-radius:.4rem;border:1px solid #888;margin-right:.6rem;cursor:pointer}
.approve{background:#1f7a3a;color:#fff;border-color:#1f7a3a}.reject{background:#fff;color:#a11}.picked{outline:3px solid #f0b400}
.muted{color:#666;font-size:.9rem}.result{font-size:1.1rem}`

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex"><title>${esc(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`
}

export type PageMessage = {
  accountId: string
  channel: string
  to: string
  text: string
  mediaUrl: string | null
  keyLabel: string | null
  keyId: string
  expiresAt: string
}

export function approvalPageHtml(token: string, m: PageMessage, picked: 'approve' | 'reject' | undefined): string {
  const t = esc(token)
  return page(
    'Approve a message',
    `<h1>An agent wants to message someone who never wrote</h1>
<p>The key <strong>${esc(m.keyLabel ?? m.keyId)}</strong> asked to send this from <strong>${esc(m.accountId)}</strong> (${esc(m.channel)}) to <strong>${esc(m.to)}</strong>. Nothing is sent unless you approve it.</p>
<div class="card"><div class="text" id="text">${esc(m.text)}</div>${m.mediaUrl ? `<p class="muted">Attachment: ${esc(m.mediaUrl)}</p>` : ''}</div>
<form method="post" action="/approvals">
<input type="hidden" name="token" value="${t}">
<button class="approve${picked === 'approve' ? ' picked' : ''}" name="decision" value="approve" type="submit">Approve and send</button>
<button class="reject${picked === 'reject' ? ' picked' : ''}" name="decision" value="reject" type="submit">Reject</button>
</form>
<p class="muted">Approved messages still pass every sending limit at that moment. This link works until ${esc(m.expiresAt)}.</p>`
  )
}

export function approvalResultHtml(title: string, detail: string): string {
  return page(title, `<h1>${esc(title)}</h1><p class="result" id="result">${esc(detail)}</p>`)
}
