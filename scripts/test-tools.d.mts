/** Debian's Chromium, which playwright-core drives (nothing is downloaded at test time). */
export declare const CHROMIUM: string
/** The Redis server the Redis tests start privately, looked up on PATH. */
export declare const REDIS_SERVER: string
/** Debian's Python, by its path, for the OAuth client tests. */
export declare const PYTHON3: string
/** What installs the given Debian packages (and what a non-root user is told to run). */
export declare function installCommand(packages: readonly string[]): string
/** The Debian packages of the tools this machine lacks, in install order. */
export declare function missingTestTools(): string[]
