/**
 * Undoing what connect set up at the providers (spec 4.5: the number stays with the provider): Twilio's
 * incoming-SMS URL is cleared, the gateway's webhooks are deleted. Best effort: removal goes ahead when a provider
 * cannot be reached, and says so (`upstream_cleared: false`).
 */
import type { AndroidTransport, TwilioTransport } from './config'
import { deleteWebhook } from './gateway-api'
import { setSmsUrl } from './twilio-api'

export async function clearTwilio(env: Env, t: TwilioTransport): Promise<boolean> {
  try {
    await setSmsUrl(env, { accountSid: t.account_sid, authToken: t.auth_token }, t.number_sid, '')
    return true
  } catch (err) {
    console.error(
      JSON.stringify({ msg: 'sms teardown: Twilio webhook not cleared', number_sid: t.number_sid, error: err instanceof Error ? err.message : String(err) })
    )
    return false
  }
}

export async function clearAndroid(a: AndroidTransport): Promise<boolean> {
  const creds = { apiUrl: a.api_url, username: a.username, password: a.password }
  let all = true
  for (const hook of a.webhook_ids) {
    try {
      await deleteWebhook(creds, hook.id)
    } catch (err) {
      all = false
      console.error(
        JSON.stringify({ msg: 'sms teardown: gateway webhook not deleted', webhook_id: hook.id, error: err instanceof Error ? err.message : String(err) })
      )
    }
  }
  return all
}
