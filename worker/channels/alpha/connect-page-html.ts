/**
 * The hosted connect page for an alpha number: one self-contained HTML document (no CDN) that polls its state
 * endpoint and shows a self-refreshing QR code or the pairing code with instructions, a countdown, a success state,
 * and a clear explanation when linking cannot finish (passkey, expired code, no relay). When the phone asks for the
 * owner's passkey it gives the one-time passkey link for the helper on web.whatsapp.com, then the code to compare
 * with the phone (and "The codes match" when alpha asks for it). Built for a phone screen.
 */
import { escapeHtml as esc, PAGE_STYLE as STYLE } from '../page-html'

export type ConnectPageInput = {
  phoneMasked: string
  statePath: string
  restartPath: string
  /** The owner's "the codes match" (passkey-routes.ts). */
  confirmPath: string
  /** The passkey guide (the ceremony API's path opened without a token). */
  guidePath: string
  pageExpiresAt: number
  nonce: string
}

/** The passkey link's field: long, selectable, small. */
const PASSKEY_STYLE =
  'h2{font-size:1.1rem;margin:0 0 6px}input{width:100%;font:12px ui-monospace,monospace;padding:8px;border:1px solid var(--line);border-radius:8px;margin-top:12px}'

const SCRIPT = `
const $ = (id) => document.getElementById(id)
const view = $('view'), cfg = JSON.parse($('cfg').textContent)
let state = null, timer = null, failures = 0
const secs = (at) => Math.max(0, Math.round((at - Date.now()) / 1000))
const fmt = (s) => s >= 60 ? Math.floor(s / 60) + ' min ' + String(s % 60).padStart(2, '0') + ' s' : s + ' s'
const el = (tag, attrs, ...kids) => { const e = document.createElement(tag); for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v); for (const k of kids) e.append(k); return e }
const steps = (items) => el('ol', {}, ...items.map((t) => el('li', {}, t)))
function render() {
  const s = state
  view.replaceChildren()
  $('page-left').textContent = fmt(secs(cfg.pageExpiresAt))
  if (!s) { view.append(el('div', { class: 'spin' }), el('p', { class: 'muted' }, 'Loading…')); return }
  if (s.page_expired) { view.append(el('p', { class: 'bad' }, 'This link has expired.'), el('p', { class: 'muted' }, 'Ask for a new link to connect this number.')); return }
  $('foot').hidden = s.status === 'connected' || s.status === 'open' || !!s.page_expired
  if (s.status === 'connected' || s.status === 'open') {
    view.append(el('div', { class: 'ok', 'aria-hidden': 'true' }, '✓'), el('h2', {}, 'Connected'), el('p', { class: 'muted' }, 'Your number is linked. You can close this page.'))
    return
  }
  if (s.pairing_code) {
    const code = s.pairing_code.slice(0, 4) + '-' + s.pairing_code.slice(4)
    view.append(el('p', {}, 'Enter this code on your phone'), el('div', { class: 'code', id: 'code' }, code),
      el('p', { class: 'muted' }, 'Valid for ', el('span', { class: 'count', id: 'left' }, fmt(secs(s.pairing_code_expires_at)))),
      steps(['Open alpha on your phone.', 'Go to Settings → Linked devices → Link a device.', 'Tap “Link with phone number instead” and type the code.']))
    return
  }
  if (s.qr_data_url) {
    view.append(el('img', { class: 'qr', id: 'qr', alt: 'QR code to scan with your phone', src: s.qr_data_url }),
      el('p', { class: 'muted' }, 'New code in ', el('span', { class: 'count', id: 'left' }, fmt(secs(s.qr_expires_at)))),
      steps(['Open alpha on your phone.', 'Go to Settings → Linked devices → Link a device.', 'Point your phone at this code.']))
    return
  }
  if (s.passkey) { passkey(s.passkey); return }
  if (s.status === 'connecting') { view.append(el('div', { class: 'spin' }), el('p', {}, 'Finishing on your phone…')); return }
  if (s.status === 'disconnected') {
    view.append(el('p', { class: 'bad' }, s.message || 'Linking stopped.'))
    if (s.reason === 'passkey_required') view.append(el('p', { class: 'muted' }, 'Your phone asks for your passkey to link a new device, and passkey linking is off for this account: ask whoever gave you this page to turn it on. ', guide()))
    if (s.can_restart) { const b = el('button', { type: 'button', id: 'restart' }, 'Get a new code'); b.onclick = restart; view.append(b) }
    return
  }
  view.append(el('div', { class: 'spin' }), el('p', {}, s.message || 'Preparing your code…'))
}
function guide() { return el('a', { href: cfg.guidePath, target: '_blank', rel: 'noopener' }, 'How linking with a passkey works') }
function passkey(p) {
  if (p.stage === 'waiting') {
    view.append(el('h2', {}, 'Your phone asks for your passkey'))
    if (!p.link) { view.append(el('p', { class: 'bad' }, 'The phone stopped waiting for the passkey.')); return }
    const field = el('input', { id: 'passkey-link', readonly: '', value: p.link, 'aria-label': 'Passkey link' })
    const copy = el('button', { type: 'button', id: 'copy' }, 'Copy the passkey link')
    copy.onclick = async () => { field.select(); try { await navigator.clipboard.writeText(p.link); copy.textContent = 'Copied' } catch {} }
    view.append(steps(['On a computer, open web.whatsapp.com in the browser where your passkey works.', 'Start the passkey helper there (the extension, or the bookmark from the guide).', 'Paste this passkey link into it and confirm with your fingerprint, face or PIN:']),
      field, copy, el('p', { class: 'muted' }, 'Works once, for ', el('span', { class: 'count', id: 'left' }, fmt(secs(p.expires_at)))))
    if (p.open_url) view.append(el('p', { class: 'muted' }, 'On the computer with the helper extension: ', el('a', { href: p.open_url, id: 'open-web', target: '_blank', rel: 'noopener noreferrer' }, 'open web.whatsapp.com with this link'), '.'))
    view.append(guide())
    return
  }
  if (p.stage === 'accepted') { view.append(el('div', { class: 'spin' }), el('p', {}, 'Passkey accepted. Waiting for your phone…')); return }
  view.append(el('p', {}, 'Check that your phone shows this code'), el('div', { class: 'code', id: 'passkey-code' }, p.code))
  if (p.confirm) { const b = el('button', { type: 'button', id: 'confirm' }, 'The codes match'); b.onclick = confirmCode; view.append(b, el('p', { class: 'muted' }, 'If they differ, do not confirm: close this page.')) }
  else view.append(el('div', { class: 'spin' }), el('p', { class: 'muted' }, 'Finishing on your phone…'))
}
async function confirmCode() {
  state = null; render()
  try { await fetch(cfg.confirmPath, { method: 'POST' }) } catch {}
  poll()
}
async function poll() {
  clearTimeout(timer)
  try {
    const r = await fetch(cfg.statePath, { cache: 'no-store' })
    state = await r.json(); failures = 0
  } catch { failures++ }
  render()
  if (state && (state.status === 'connected' || state.page_expired)) return
  timer = setTimeout(poll, failures ? Math.min(15000, 2000 * 2 ** failures) : 2000)
}
async function restart() {
  state = null; render()
  try { const r = await fetch(cfg.restartPath, { method: 'POST' }); state = await r.json() } catch {}
  poll()
}
setInterval(() => {
  $('page-left').textContent = fmt(secs(cfg.pageExpiresAt))
  const left = $('left'); if (!left || !state) return
  const at = state.passkey ? state.passkey.expires_at : state.pairing_code ? state.pairing_code_expires_at : state.qr_expires_at
  left.textContent = fmt(secs(at))
}, 1000)
render(); poll()`

export function connectPageHtml(p: ConnectPageInput): string {
  const cfg = JSON.stringify({
    statePath: p.statePath,
    restartPath: p.restartPath,
    confirmPath: p.confirmPath,
    guidePath: p.guidePath,
    pageExpiresAt: p.pageExpiresAt,
  }).replace(/</g, '\\u003c')
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>Link your alpha number</title><style>${STYLE}${PASSKEY_STYLE}</style></head>
<body><main><h1>Link your alpha number</h1><p class="muted">${esc(p.phoneMasked)}</p>
<div class="card" id="view" aria-live="polite"></div>
<footer class="muted" id="foot">This page works for <span class="count" id="page-left"></span>. Keep it open until it says connected.</footer></main>
<script type="application/json" id="cfg">${cfg}</script><script nonce="${esc(p.nonce)}">${SCRIPT}</script></body></html>`
}

/** What the page shows when its token is not valid. */
export function connectPageError(title: string, detail: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${esc(title)}</title><style>${STYLE}</style></head>
<body><main><h1>${esc(title)}</h1><div class="card"><p class="bad">${esc(detail)}</p></div></main></body></html>`
}
