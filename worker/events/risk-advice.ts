/** The advice each ban-risk signal carries (issue 25): in `account.at_risk` and on the account's `risk`. */
import type { RiskSignalName } from '../../schema/frames'

/** What to do while each signal is in force, one sentence each (the `advice` of the event and the account). */
export const RISK_ADVICE: Record<RiskSignalName, string> = {
  reachout_timelock: 'alpha blocks new chats until the time lock ends: answer people who wrote, start no conversations, and do not retry refused sends.',
  new_chat_refused: 'alpha refused a new chat (463): write only to people who wrote to the account for the next day; every retry worsens the restriction.',
  new_chat_cap: 'alpha says the account is near or at its cap of new chats for this period: start no new conversations until it resets.',
  flood_wait: 'beta asked the account to slow down: sends are paused until it ends; send less often afterwards.',
  spam_flag: 'beta limited the account for messaging people who do not know it: write only to mutual contacts, and let the owner check @SpamBot in the app.',
  carrier_filtering: 'A carrier filtered a message as spam: vary the text, send only to people who opted in, and check the number’s registration (A2P).',
  policy_block: 'The social network blocked a send as abusive: reply only to people who wrote within 24 h and review the content.',
}
