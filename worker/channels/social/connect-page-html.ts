/**
 * The hosted pages of the page-inbox connect flow: the link the agent hands the user (what will happen, then one
 * button to the permission screen of their own app), and the page the permission screen returns to (pages loaded,
 * or why not). Self-contained HTML without scripts, built for a phone screen.
 */
const esc = (s: string) => s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!)

const STYLE = `
:root{color-scheme:light;--fg:#111827;--muted:#4b5563;--line:#e5e7eb;--accent:#1d4ed8;--ok:#0f766e;--bad:#b91c1c;--bg:#f9fafb}
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:440px;margin:0 auto;padding:24px 18px 32px}h1{font-size:1.35rem;margin:0 0 4px}p{margin:0 0 12px}
.muted{color:var(--muted);font-size:.92rem}.card{background:#fff;border:1px solid var(--line);border-radius:14px;padding:20px;margin-top:16px}
ol{padding-left:1.3em;margin:0 0 8px}li{margin:4px 0}.mark{font-size:3rem;line-height:1;text-align:center;margin:0 0 8px}
.ok{color:var(--ok)}.bad{color:var(--bad)}
a.button{display:block;text-align:center;font-weight:600;color:#fff;background:var(--accent);border-radius:10px;padding:12px 18px;margin-top:14px;text-decoration:none}`

function doc(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${esc(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`
}

export function connectPageHtml(p: { dialogUrl: string; expiresAt: number; appId: string }): string {
  const minutes = Math.max(1, Math.round((p.expiresAt - Date.now()) / 60_000))
  return doc(
    'Connect your page inbox',
    `<h1>Connect your page inbox</h1><p class="muted">So your agent can answer the people who write to your page.</p>
<div class="card" id="steps"><ol>
<li>Continue to the permission screen of your app (App ID ${esc(p.appId)}).</li>
<li>Choose the page (and its Instagram account, if linked) and grant every permission asked.</li>
<li>Come back here; then tell your agent which page to connect.</li></ol>
<a class="button" id="continue" href="${esc(p.dialogUrl)}" rel="noreferrer">Continue to the permission screen</a>
<p class="muted" style="margin-top:12px">This link works for about ${minutes} minute${minutes === 1 ? '' : 's'} and only once.</p></div>`
  )
}

export function callbackPageHtml(pages: number): string {
  return doc(
    'Pages loaded',
    `<div class="card" id="done"><p class="mark ok">✓</p><h1>Permissions granted</h1><p>${pages} page${pages === 1 ? '' : 's'} loaded. Go back to your agent: it will list them and connect the one you choose.</p><p class="muted">You can close this page.</p></div>`
  )
}

export function errorPageHtml(title: string, message: string): string {
  return doc(title, `<div class="card" id="error"><p class="mark bad">!</p><h1>${esc(title)}</h1><p>${esc(message)}</p></div>`)
}
