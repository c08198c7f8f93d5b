// Types of scripts/chromium.mjs for the TypeScript tests that import it.
export declare const WARM_TIMEOUT_MS: number
export declare function findChromium(env?: Record<string, string | undefined>): string | null
export declare function ensureChromium(env?: Record<string, string | undefined>, log?: (line: string) => void, root?: boolean): string
export declare function warmChromium(path: string, env?: Record<string, string | undefined>, timeoutMs?: number): number
