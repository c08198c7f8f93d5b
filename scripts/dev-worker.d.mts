// Types of scripts/dev-worker.mjs for the TypeScript tests.
import type { OutboundGuardOptions } from './outbound-guard.mjs'

export type DevWorker = { url: Promise<URL>; ready: Promise<void>; dispose(): Promise<void> }

export declare function startDevWorker(opts: {
  port: number
  ip?: string
  persistTo?: string
  envFiles?: string[]
  vars?: Record<string, string>
  allowLoopback: boolean
  guard?: Omit<OutboundGuardOptions, 'allowLoopback'>
  logLevel?: 'none' | 'error' | 'warn' | 'info' | 'log' | 'debug'
}): Promise<DevWorker>
