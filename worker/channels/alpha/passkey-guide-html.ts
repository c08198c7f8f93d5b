/**
 * The guide an owner reaches from the connect page (or by opening the passkey link itself): why the phone asks for a
 * passkey, why the last step happens on web.whatsapp.com, and the helper to run there: the bookmarklet to drag to
 * the bookmarks bar, or the browser extension (docs/alpha-passkey-helper/). Static: no script runs on it.
 */
import { escapeHtml as esc, PAGE_STYLE as STYLE } from '../page-html'
import { PASSKEY_BOOKMARKLET } from './passkey-bookmarklet'

export const PASSKEY_GUIDE_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const EXTRA = `.card{text-align:left}.mark{display:inline-block;padding:8px 14px;border-radius:10px;background:var(--accent);color:#fff;
font-weight:600;text-decoration:none;cursor:grab}code{background:#f2f4f8;padding:0 .25rem;border-radius:3px}`

export function passkeyGuideHtml(): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>Link your number with your passkey</title><style>${STYLE}${EXTRA}</style></head>
<body><main><h1>Link your number with your passkey</h1>
<div class="card"><p>Your phone asks for your <b>passkey</b> before it links a new device. A passkey belongs to one website, and
yours belongs to <b>whatsapp.com</b>: only a page on <code>web.whatsapp.com</code> can use it. So the last step of linking happens
there, in your own browser, with a small helper. The helper asks your browser for the passkey and sends the one-time answer to
this gateway, nothing else; you do not need to log in on web.whatsapp.com.</p></div>
<div class="card"><ol>
<li>On a computer, keep the connect page you were given open. When it says your phone asks for your passkey, copy the <b>passkey link</b> it shows (it works once, for a few minutes).</li>
<li>Open <code>https://web.whatsapp.com</code> in Chrome, Edge, Safari or Firefox, where your passkey works (saved in the browser or a password manager, or on your phone: the browser then shows a code to scan).</li>
<li>Start the helper there. <b>Bookmarklet:</b> drag this button to your bookmarks bar, then click the bookmark on web.whatsapp.com:
<p><a class="mark" id="bookmarklet" href="${esc(PASSKEY_BOOKMARKLET)}">Gateway passkey</a></p>
<b>Or the browser extension</b> (docs/alpha-passkey-helper in the gateway's repository; it runs on web.whatsapp.com only and asks for no permission): it adds a <i>Gateway passkey</i> button at the bottom left of web.whatsapp.com.</li>
<li>Paste the passkey link, press <b>Use my passkey</b>, and confirm with your fingerprint, face, PIN or security key.</li>
<li>Back on the connect page: it shows a code. Check that your phone shows the same one; if the page asks, press <b>The codes match</b>.</li>
</ol></div>
<div class="card"><p class="muted">If the connect page says linking stopped (the passkey took too long, or it was not accepted), press
<b>Get a new code</b> there and start again: nothing is retried by itself. If it says passkey linking is off for your account, ask
whoever gave you the connect page to turn it on.</p></div>
</main></body></html>`
}
