// Starts Scalar's API reference on GET /docs (worker/routes/docs.ts): its settings come from the page's JSON data
// block, so the page's Content-Security-Policy allows scripts from this origin only, none inline.
const config = JSON.parse(document.getElementById('docs-config').textContent)
globalThis.Scalar.createApiReference('#app', config)
