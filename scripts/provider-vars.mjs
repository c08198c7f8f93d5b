// The provider base URLs `npm start` passes from its own environment to the Worker (SMS: docs/channels/sms.md; page
// inbox: docs/channels/social.md), so `TWILIO_API_URL=http://127.0.0.1:9999 npm start` talks to a local fake.
// Only those set (and not empty) go through; unset, wrangler.toml's values stand.

export const PROVIDER_VARS = ['TWILIO_API_URL', 'TWILIO_MESSAGING_API_URL', 'SMS_GATEWAY_URL', 'GRAPH_API_URL', 'GRAPH_DIALOG_URL', 'GRAPH_API_VERSION']

/** @param {Record<string, string | undefined>} env */
export function providerVars(env) {
  return Object.fromEntries(PROVIDER_VARS.flatMap((name) => (env[name] ? [[name, env[name]]] : [])))
}
