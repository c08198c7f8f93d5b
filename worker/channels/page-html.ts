/** What the hosted account pages (alpha's, beta's) share in their HTML: escaping, and one look, phone first. */

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!)

/** One narrow column, cards, a big primary button. */
export const PAGE_STYLE = `
:root{color-scheme:light;--fg:#111827;--muted:#4b5563;--line:#e5e7eb;--accent:#0f766e;--bad:#b91c1c;--bg:#f9fafb}
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:440px;margin:0 auto;padding:24px 18px 32px}
h1{font-size:1.35rem;margin:0 0 4px}p{margin:0 0 12px}.muted{color:var(--muted);font-size:.92rem}
.card{background:#fff;border:1px solid var(--line);border-radius:14px;padding:20px;margin-top:16px;text-align:center}
.qr{width:100%;max-width:300px;aspect-ratio:1;image-rendering:pixelated;border-radius:8px}
.code{font:700 2rem/1.2 ui-monospace,SFMono-Regular,Menlo,monospace;letter-spacing:.12em;margin:8px 0 4px}
ol{text-align:left;padding-left:1.3em;margin:14px 0 0}li{margin:4px 0}
.count{font-variant-numeric:tabular-nums;font-weight:600}
.ok{color:var(--accent);font-size:3rem;line-height:1}.bad{color:var(--bad)}
button{font:inherit;font-weight:600;color:#fff;background:var(--accent);border:0;border-radius:10px;padding:12px 18px;margin-top:14px;width:100%}
.spin{width:42px;height:42px;border:4px solid var(--line);border-top-color:var(--accent);border-radius:50%;margin:18px auto;animation:s 1s linear infinite}
@keyframes s{to{transform:rotate(360deg)}}footer{margin-top:18px;text-align:center}`
