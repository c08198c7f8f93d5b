/** The simulator as a Driver: simulated phones behind the same relay, link, frames and Durable Objects as the real driver. */
import type { Driver } from '../connector'
import { SimClient } from './client'

export const simDriver: Driver = (opts) => new SimClient(opts)
