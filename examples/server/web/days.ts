/** One day in milliseconds: the token forms count lifetimes and retention in whole days. */
export const DAY_MS = 86_400_000
