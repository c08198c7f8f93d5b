// The gateway's passkey helper for web.whatsapp.com (docs/channels/alpha.md, "When the phone asks for a passkey").
// One file, two ways in: the extension in this folder runs it as a content script on https://web.whatsapp.com only,
// and the bookmarklet (bookmarklet.txt, made from this file by scripts/passkey-bookmarklet.mjs) runs it on the open
// page. It takes the passkey link from the connect page, fetches the request options from the gateway, asks the
// browser for the owner's passkey (navigator.credentials.get) and posts the assertion back. Nothing is kept.
;(() => {
  const KEY = '__gatewayPasskeyHelper'
  if (window[KEY]) return window[KEY].open()
  const inExtension = typeof chrome !== 'undefined' && !!chrome.runtime && !!chrome.runtime.id
  const b64 = {
    decode(s) {
      const t = s.replace(/-/g, '+').replace(/_/g, '/')
      const bin = atob(t + '='.repeat((4 - (t.length % 4)) % 4))
      return Uint8Array.from(bin, (ch) => ch.charCodeAt(0)).buffer
    },
    encode(buf) {
      let bin = ''
      for (const byte of new Uint8Array(buf)) bin += String.fromCharCode(byte)
      return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
    },
  }
  // The JSON forms of WebAuthn (Level 3): the browser's own where it has them, the same by hand where not.
  function requestOptions(json) {
    if (typeof PublicKeyCredential.parseRequestOptionsFromJSON === 'function') return PublicKeyCredential.parseRequestOptionsFromJSON(json)
    return {
      ...json,
      challenge: b64.decode(json.challenge),
      allowCredentials: (json.allowCredentials || []).map((c) => ({ ...c, id: b64.decode(c.id) })),
    }
  }
  function credentialJson(cred) {
    if (typeof cred.toJSON === 'function') return cred.toJSON()
    const r = cred.response
    return {
      id: cred.id,
      rawId: b64.encode(cred.rawId),
      type: cred.type,
      response: {
        clientDataJSON: b64.encode(r.clientDataJSON),
        authenticatorData: b64.encode(r.authenticatorData),
        signature: b64.encode(r.signature),
        userHandle: r.userHandle ? b64.encode(r.userHandle) : null,
      },
    }
  }
  // The passkey link is the gateway's ceremony URL with the token as its fragment.
  function parseLink(text) {
    let url
    try {
      url = new URL(text.trim())
    } catch {
      throw new Error('That is not a passkey link. Copy the whole link from your connect page.')
    }
    const local = url.hostname === 'localhost' || url.hostname === '127.0.0.1'
    if ((url.protocol !== 'https:' && !local) || !url.hash || !url.pathname.endsWith('/connect/alpha-web/passkey'))
      throw new Error('That is not a passkey link. Copy the whole link from your connect page.')
    return { api: url.origin + url.pathname, token: url.hash.slice(1) }
  }
  async function call(api, token, init) {
    let res
    try {
      res = await fetch(api, { ...init, credentials: 'omit', headers: { Authorization: `Bearer ${token}`, ...(init && init.headers) } })
    } catch {
      // A network failure, or this page's security policy (a bookmarklet runs under it; the extension does not).
      throw new Error('The gateway could not be reached from this page. If you used the bookmark, use the browser extension instead.')
    }
    let body = null
    try {
      body = await res.json()
    } catch {}
    if (!res.ok) throw new Error((body && body.error) || `The gateway answered ${res.status}.`)
    return body
  }
  async function run(text, say) {
    const { api, token } = parseLink(text)
    say('Asking the gateway for the request…')
    const ceremony = await call(api, token)
    say('Confirm with your fingerprint, face, PIN or security key…')
    let cred
    try {
      cred = await navigator.credentials.get({ publicKey: requestOptions(ceremony.request_options) })
    } catch (err) {
      throw new Error(err && err.name === 'NotAllowedError' ? 'The passkey was not used (cancelled or timed out). Try again.' : `The browser refused: ${err && err.message}`)
    }
    if (!cred) throw new Error('The browser gave no passkey.')
    say('Sending it to the gateway…')
    await call(api, token, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(credentialJson(cred)) })
    return 'Done. Go back to your connect page: it shows a code to compare with your phone.'
  }

  // Built element by element with a constructed stylesheet: a page that enforces Trusted Types refuses innerHTML, and
  // CSP's style-src does not apply to constructed stylesheets.
  const host = document.createElement('div')
  host.id = 'gateway-passkey-helper'
  const root = host.attachShadow({ mode: 'open' })
  const sheet = new CSSStyleSheet()
  sheet.replaceSync(`:host{all:initial}.box{position:fixed;z-index:2147483647;left:16px;bottom:16px;font:14px/1.4 system-ui,sans-serif;
color:#111;background:#fff;border:1px solid #ccd;border-radius:10px;box-shadow:0 6px 24px rgba(0,0,0,.18);padding:12px;width:320px}
.pill{cursor:pointer;width:auto;padding:8px 12px;font-weight:600}h2{font-size:15px;margin:0 0 6px}p{margin:6px 0}
input{box-sizing:border-box;width:100%;padding:6px;border:1px solid #aab;border-radius:6px;font:12px monospace}
button{margin-top:8px;padding:7px 12px;border:0;border-radius:6px;background:#1a7f37;color:#fff;font-weight:600;cursor:pointer}
button[disabled]{opacity:.5}.x{position:absolute;right:8px;top:4px;background:none;color:#555;margin:0;padding:2px 6px}
.bad{color:#b42318}.ok{color:#1a7f37}`)
  root.adoptedStyleSheets = [sheet]
  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag)
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v)
    e.append(...kids)
    return e
  }
  root.append(
    el('div', { class: 'box pill', id: 'pill', hidden: '' }, 'Gateway passkey'),
    el(
      'div',
      { class: 'box', id: 'panel', hidden: '' },
      el('button', { class: 'x', id: 'close', title: 'Close' }, '×'),
      el('h2', {}, 'Passkey for your gateway link'),
      el('p', {}, 'Paste the passkey link from your connect page.'),
      el('input', { id: 'link', placeholder: 'https://…/connect/alpha-web/passkey#…', autocomplete: 'off' }),
      el('button', { id: 'go' }, 'Use my passkey'),
      el('p', { id: 'status', role: 'status' })
    )
  )
  const $ = (id) => root.getElementById(id)
  const say = (text, cls) => {
    $('status').textContent = text
    $('status').className = cls || ''
  }
  const open = () => {
    $('pill').hidden = true
    $('panel').hidden = false
  }
  $('pill').onclick = open
  $('close').onclick = () => {
    $('panel').hidden = true
    $('pill').hidden = false
  }
  $('go').onclick = async () => {
    $('go').disabled = true
    try {
      say(await run($('link').value, say), 'ok')
    } catch (err) {
      say(err && err.message ? err.message : String(err), 'bad')
    } finally {
      $('go').disabled = false
    }
  }
  // The connect page may open web.whatsapp.com with the link in the fragment: take it, and take it out of the URL.
  const handed = /[#&]gateway-passkey=([^&]+)/.exec(location.hash)
  if (handed) {
    $('link').value = decodeURIComponent(handed[1])
    history.replaceState(null, '', location.pathname + location.search)
  }
  ;(document.body || document.documentElement).append(host)
  window[KEY] = { open }
  if (handed || !inExtension) open()
  else $('pill').hidden = false
})()
