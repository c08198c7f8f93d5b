// Types of scripts/outbound-guard.mjs for the TypeScript tests.
import type { SecureContextOptions } from 'node:tls'

export declare const REFUSED_STATUS: number
export declare const REFUSED_HEADER: string

export type ResolvedAddress = { address: string; family: number }

export type OutboundGuardOptions = {
  allowLoopback?: boolean
  resolve?: (hostname: string) => Promise<ResolvedAddress[]>
  isAllowedAddress?: (ip: string) => boolean
  tls?: SecureContextOptions
}

export declare function checkedAddresses(hostname: string, opts?: OutboundGuardOptions): Promise<ResolvedAddress[]>

export declare function createOutboundGuard(opts?: OutboundGuardOptions): (request: Request) => Promise<Response>
