/** beta's hosted login page link (spec 4.4, part 8): its path under /v1, its token purpose, its life of 30 minutes. */
import { BETA_CONNECT_PAGE_TTL_MS } from '../../config'
import { accountPage } from '../account-page'

export const BETA_PAGE_BASE = '/v1/channels/beta'
export const BETA_PAGE = accountPage('beta-connect-page', `${BETA_PAGE_BASE}/connect/page`, () => BETA_CONNECT_PAGE_TTL_MS)
