import { TokenStoreError } from '../errors.js'

// Private helper of the OAuth module; not part of the public API.

/** What a transition decided: the answer, and the record to write, if anything changes. */
export type Transition<T, R> = { readonly result: R; readonly next?: T }

const MAX_ATTEMPTS = 16

/**
 * Reads a record, applies a pure transition and writes the result by compare-and-set, reading again
 * whenever another writer got there first. The transition sees the record as stored, so of several
 * concurrent transitions each one sees the previous one's outcome: a code is consumed once.
 */
export async function updateRecord<T extends { readonly version: number }, R>(
  load: () => Promise<T | undefined>,
  replace: (next: T) => Promise<boolean>,
  transition: (current: T | undefined) => Transition<T, R>,
): Promise<R> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const step = transition(await load())
    if (step.next === undefined || (await replace(step.next))) return step.result
  }
  throw new TokenStoreError('OAuth state kept changing under concurrent updates; giving up')
}
