/**
 * beta's hosted login page: one self-contained HTML document (no CDN) that polls its state endpoint and shows the
 * step the login waits for (the code form, the two-step password form, or the login QR replaced before each token
 * lapses), a success state, and what to do when a step is refused or the login stops. Built for a phone screen.
 * What the user types goes to the page's own submission endpoints and is never put back into the page.
 */
import { escapeHtml as esc, PAGE_STYLE } from '../page-html'

export type BetaPageInput = { phoneMasked: string; statePath: string; codePath: string; passwordPath: string; pageExpiresAt: number; nonce: string }

const STYLE = `${PAGE_STYLE}
form{text-align:left;margin-top:6px}label{display:block;font-weight:600;margin:4px 0 6px}
input{font:inherit;width:100%;padding:12px 14px;border:1px solid #9ca3af;border-radius:10px;background:#fff}
input:focus{outline:2px solid var(--accent);outline-offset:1px;border-color:var(--accent)}
input.code-input{font:600 1.6rem/1.2 ui-monospace,SFMono-Regular,Menlo,monospace;letter-spacing:.3em;text-align:center}
button[disabled]{opacity:.6}.err{color:var(--bad);font-weight:600;margin:10px 0 0;min-height:1.5em}.hint{margin:8px 0 0}`

const SCRIPT = `
const $ = (id) => document.getElementById(id)
const view = $('view'), cfg = JSON.parse($('cfg').textContent)
let state = null, shown = '', timer = null, failures = 0, hint = null, finished = false
const secs = (at) => Math.max(0, Math.round((at - Date.now()) / 1000))
const fmt = (s) => s >= 60 ? Math.floor(s / 60) + ' min ' + String(s % 60).padStart(2, '0') + ' s' : s + ' s'
const el = (tag, attrs, ...kids) => { const e = document.createElement(tag); for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v); for (const k of kids) e.append(k); return e }
const steps = (items) => el('ol', {}, ...items.map((t) => el('li', {}, t)))
const STOPPED = {
  link_expired: 'The login was not finished in time.',
  unknown_number: 'This number has no beta account.',
  blocked_by_beta: 'beta has banned this number.',
  number_banned: 'beta has banned this number.',
  too_many_attempts: 'Too many login attempts. Wait a while before trying again.',
  removed: 'This number is no longer on the account.',
  login_failed: 'beta could not finish the login.',
}
function kindOf(s) {
  if (finished) return 'connected'
  if (!s) return 'loading'
  if (s.expired) return 'expired'
  if (s.invalid) return 'invalid'
  if (s.status === 'connected') return 'connected'
  if (s.status === 'code_required') return 'code'
  if (s.status === 'password_required') return 'password'
  if (s.status === 'initializing') return s.qr_data_url ? 'qr' : 'wait'
  return 'stopped'
}
function stepForm(kind) {
  const isCode = kind === 'code'
  const input = isCode
    ? el('input', { id: 'code', name: 'code', class: 'code-input', inputmode: 'numeric', autocomplete: 'one-time-code', maxlength: '16', required: '', 'aria-describedby': 'err' })
    : el('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', maxlength: '256', required: '', 'aria-describedby': 'err' })
  const button = el('button', { type: 'submit', id: 'submit' }, isCode ? 'Continue' : 'Log in')
  const form = el('form', { id: isCode ? 'code-form' : 'password-form', novalidate: '' },
    el('label', { for: input.id }, isCode ? 'Login code' : 'Two-step verification password'), input,
    el('p', { class: 'err', id: 'err', role: 'alert' }), button)
  form.onsubmit = (e) => { e.preventDefault(); submit(kind, input, button) }
  return form
}
function render() {
  $('page-left').textContent = fmt(secs(cfg.pageExpiresAt))
  const s = state, kind = kindOf(s)
  $('foot').hidden = kind === 'connected' || kind === 'expired' || kind === 'invalid' || kind === 'stopped'
  if (kind === 'qr') { const img = $('qr'); if (img && img.getAttribute('src') !== s.qr_data_url) img.setAttribute('src', s.qr_data_url) }
  if (kind === 'wait' && $('wait-msg')) $('wait-msg').textContent = s.message || 'Starting your login…'
  // The view is rebuilt only when the step changes, so a poll never wipes what the user is typing.
  const key = kind === 'stopped' ? kind + ':' + (s.reason || '') : kind
  if (key === shown) return
  shown = key
  view.replaceChildren()
  if (kind === 'loading') { view.append(el('div', { class: 'spin' }), el('p', { class: 'muted' }, 'Loading…')); return }
  if (kind === 'expired') { view.append(el('p', { class: 'bad', id: 'expired' }, 'This link has expired.'), el('p', { class: 'muted' }, 'Ask for a new link to log in this number.')); return }
  if (kind === 'invalid') { view.append(el('p', { class: 'bad' }, 'This link is not valid any more.'), el('p', { class: 'muted' }, 'Ask for a new link to log in this number.')); return }
  if (kind === 'connected') {
    view.append(el('div', { class: 'ok', 'aria-hidden': 'true' }, '✓'), el('h2', {}, 'Connected'), el('p', { class: 'muted' }, 'Your beta account is logged in. You can close this page.'))
    return
  }
  if (kind === 'code') {
    view.append(el('p', {}, 'beta sent a login code to your beta app.'),
      el('p', { class: 'muted' }, 'Open beta on a phone or computer where you are logged in: the code is in a message from beta. Enter it here, not in the app.'),
      stepForm('code'))
    $('code').focus()
    return
  }
  if (kind === 'password') {
    view.append(el('p', {}, 'Your account has two-step verification.'), el('p', { class: 'muted' }, 'Enter the password you set for it in beta (Settings → Privacy and Security → Two-Step Verification).'))
    if (hint) view.append(el('p', { class: 'muted hint', id: 'hint' }, 'Hint: ' + hint))
    view.append(stepForm('password'))
    $('password').focus()
    return
  }
  if (kind === 'qr') {
    view.append(el('img', { class: 'qr', id: 'qr', alt: 'QR code to scan with the beta app', src: s.qr_data_url }),
      el('p', { class: 'muted' }, 'New code in ', el('span', { class: 'count', id: 'left' }, fmt(secs(s.qr_expires_at)))),
      steps(['Open beta on your phone.', 'Go to Settings → Devices → Link Desktop Device.', 'Point your phone at this code.']))
    return
  }
  if (kind === 'wait') { view.append(el('div', { class: 'spin' }), el('p', { id: 'wait-msg' }, s.message || 'Starting your login…')); return }
  view.append(el('p', { class: 'bad', id: 'stopped' }, STOPPED[s.reason] || s.message || 'The login stopped.'), el('p', { class: 'muted' }, 'Ask for a new link to try again.'))
}
function problem(status, body, retryAfter) {
  const m = /^([a-z_]+):/.exec(body && typeof body.error === 'string' ? body.error : '')
  const code = m ? m[1] : ''
  if (code === 'code_invalid') return 'That code is not right. Check the message from beta and try again.'
  if (code === 'code_expired') return 'That code expired, so beta sent you a new one. Enter the new code.'
  if (code === 'password_invalid') return 'That password is not right. Try again.'
  if (status === 400) return 'That does not look right. Check it and try again.'
  if (status === 429) return 'Too many tries. ' + (retryAfter ? 'Wait ' + fmt(Number(retryAfter)) + ', then try again.' : 'Wait a minute, then try again.')
  if (code === 'relay_unavailable') return 'The login service is busy right now. Try again in a moment.'
  if (code === 'no_login_pending') return 'The login is not waiting for this any more.'
  return null
}
async function submit(kind, input, button) {
  const err = $('err'), value = input.value.trim() === '' ? '' : input.value
  if (!value) { err.textContent = kind === 'code' ? 'Enter the code first.' : 'Enter the password first.'; return }
  button.disabled = true; button.textContent = 'Checking…'; err.textContent = ''
  let res = null, body = null
  try {
    res = await fetch(kind === 'code' ? cfg.codePath : cfg.passwordPath, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(kind === 'code' ? { code: value } : { password: value }), cache: 'no-store' })
    body = await res.json().catch(() => null)
  } catch {}
  button.disabled = false; button.textContent = kind === 'code' ? 'Continue' : 'Log in'
  if (kind === 'password') input.value = ''
  if (!res) { err.textContent = 'Could not reach the service. Check your connection and try again.'; return }
  if (res.ok && body && body.status === 'connected') { finished = true; clearTimeout(timer); render(); return }
  if (res.ok && body && body.status === 'password_required') { hint = body.password_hint || null; state = { ...state, status: 'password_required' }; render(); return }
  const m = /^([a-z_]+):/.exec(body && typeof body.error === 'string' ? body.error : '')
  if (res.status === 410 && !(m && m[1] === 'code_expired')) { state = { expired: true }; render(); return }
  if (res.status === 403 && !(m && m[1] === 'number_banned')) { state = { invalid: true }; render(); return }
  const text = problem(res.status, body, res.headers.get('Retry-After'))
  if (text) { err.textContent = text; if (kind === 'code') input.select(); else input.focus(); poll(); return }
  // The login cannot go on (unknown number, ban, beta failed it): the state says why.
  state = { ...state, status: 'disconnected', reason: m ? m[1] : res.status === 404 ? 'removed' : null, message: body && body.error ? String(body.error).replace(/^[a-z_]+: /, '') : null }
  render()
}
async function poll() {
  clearTimeout(timer)
  if (finished) return
  try {
    const r = await fetch(cfg.statePath, { cache: 'no-store' })
    if (r.status === 410) state = { expired: true }
    else if (r.status === 403) state = { invalid: true }
    else if (r.ok) state = await r.json()
    else throw new Error(String(r.status))
    failures = 0
  } catch { failures++ }
  render()
  const kind = kindOf(state)
  if (kind === 'connected' || kind === 'expired' || kind === 'invalid' || kind === 'stopped') return
  timer = setTimeout(poll, failures ? Math.min(15000, 2000 * 2 ** failures) : 2000)
}
setInterval(() => {
  $('page-left').textContent = fmt(secs(cfg.pageExpiresAt))
  if (!finished && shown !== 'expired' && Date.now() >= cfg.pageExpiresAt) { state = { expired: true }; clearTimeout(timer); render() }
  const left = $('left'); if (left && state && state.qr_expires_at) left.textContent = fmt(secs(state.qr_expires_at))
}, 1000)
render(); poll()`

export function betaPageHtml(p: BetaPageInput): string {
  const cfg = JSON.stringify({ statePath: p.statePath, codePath: p.codePath, passwordPath: p.passwordPath, pageExpiresAt: p.pageExpiresAt }).replace(
    /</g,
    '\\u003c'
  )
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>Log in your beta account</title><style>${STYLE}</style></head>
<body><main><h1>Log in your beta account</h1><p class="muted">${esc(p.phoneMasked)}</p>
<div class="card" id="view" aria-live="polite"></div>
<footer class="muted" id="foot">This page works for <span class="count" id="page-left"></span>. Keep it open until it says connected.</footer></main>
<script type="application/json" id="cfg">${cfg}</script><script nonce="${esc(p.nonce)}">${SCRIPT}</script></body></html>`
}

/** What the page shows when its token is not valid or has expired. */
export function betaPageError(title: string, detail: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${esc(title)}</title><style>${STYLE}</style></head>
<body><main><h1>${esc(title)}</h1><div class="card"><p class="bad">${esc(detail)}</p><p class="muted">Ask for a new link to log in this number.</p></div></main></body></html>`
}
