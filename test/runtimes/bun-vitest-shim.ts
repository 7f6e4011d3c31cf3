// Preloaded by `bun test` for the pure core's unit tests (test/runtimes/core-tests.test.ts). Bun
// runs vitest files through its own runner, whose `vi` lacks the global stubs these tests use; this
// adds them, with vitest's meaning: `stubGlobal` replaces a global until `unstubAllGlobals`.
import { vi } from 'bun:test'

type Saved = { readonly name: string; readonly descriptor: PropertyDescriptor | undefined }
const saved: Saved[] = []

const shim = vi as unknown as Record<string, unknown>

shim.stubGlobal ??= (name: string, value: unknown) => {
  saved.push({ name, descriptor: Object.getOwnPropertyDescriptor(globalThis, name) })
  Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: true })
  return vi
}

shim.unstubAllGlobals ??= () => {
  // Last stub first, so that a global stubbed twice gets its original back.
  for (let stub = saved.pop(); stub !== undefined; stub = saved.pop()) {
    if (stub.descriptor === undefined) Reflect.deleteProperty(globalThis, stub.name)
    else Object.defineProperty(globalThis, stub.name, stub.descriptor)
  }
  return vi
}
