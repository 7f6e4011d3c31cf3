// The slice of Bun's test module that test/runtimes/bun-vitest-shim.ts uses; Bun's types are not installed.
declare module 'bun:test' {
  export const vi: object
}
