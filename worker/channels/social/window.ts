/**
 * The page inbox's messaging window (spec 8, upstreams 5.4): a reply must go out within 24 hours of the person's
 * last message. The extended 7-day tag is not offered, so there is no way past it. Takes the clock as an argument.
 */
import { ApiError } from '../../errors'

export const WINDOW_MS = 24 * 60 * 60 * 1000

/** Throws 409 `needs_inbound_first` or `outside_window`; passes while the window is open (its last millisecond too). */
export function checkWindow(lastInboundAt: number | null, now: number): void {
  if (lastInboundAt === null) throw new ApiError(409, 'needs_inbound_first', 'On the page inbox only people who wrote to the page can be messaged')
  if (now - lastInboundAt > WINDOW_MS) {
    const hours = Math.floor((now - lastInboundAt) / 3_600_000)
    throw new ApiError(409, 'outside_window', `This person last wrote ${hours} hours ago; the page inbox allows replies within 24 hours of their last message`)
  }
}
