import { InvalidArgumentError } from '../errors.js'

/** Whether `now` is a clock reading in epoch milliseconds: a safe, non-negative integer. */
export function isEpochMilliseconds(now: unknown): now is number {
  return Number.isSafeInteger(now) && (now as number) >= 0
}

/**
 * Refuses a clock argument that is not epoch milliseconds.
 *
 * @throws {InvalidArgumentError} naming `now`.
 */
export function requireNow(now: number): void {
  if (!isEpochMilliseconds(now)) throw new InvalidArgumentError('now must be epoch milliseconds')
}
