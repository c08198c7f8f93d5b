// Types of scripts/provider-vars.mjs for the TypeScript tests.
export declare const PROVIDER_VARS: readonly string[]
export declare function providerVars(env: Record<string, string | undefined>): Record<string, string>
