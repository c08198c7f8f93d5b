/** alpha's hosted connect page link (spec 4.3): its path, its token purpose and its life (CONNECT_PAGE_TTL_MS). */
import { connectPageTtlMs } from '../../config'
import { accountPage } from '../account-page'

export const ALPHA_PAGE = accountPage('alpha-connect-page', '/connect/alpha-web', connectPageTtlMs)
