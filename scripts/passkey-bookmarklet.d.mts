// Types of scripts/passkey-bookmarklet.mjs for the TypeScript tests.
export declare const HELPER: string
export declare const BOOKMARKLET_TXT: string
export declare const BOOKMARKLET_TS: string
export declare function bookmarklet(source: string): string
export declare function bookmarkletModule(url: string): string
