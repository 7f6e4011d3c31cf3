/**
 * The users who can sign in to the pages: the seed's handles and scrypt password hashes
 * (limits/password-hash.ts). An unknown handle is checked against a dummy hash, so that a wrong handle
 * and a wrong password take the same time and give the same answer.
 */
import { hashPassword, verifyPasswordFor } from '../limits/password-hash.js'
import type { SeedUser } from '../seed/load.js'

/**
 * Checks sign-in credentials against the seed's users.
 *
 * @example
 * const users = await UserDirectory.create(seed.users)
 * await users.verify('alice', 'alice-demo-password') // true
 */
export class UserDirectory {
  readonly #hashes: ReadonlyMap<string, string>
  readonly #dummyHash: string

  private constructor(hashes: ReadonlyMap<string, string>, dummyHash: string) {
    this.#hashes = hashes
    this.#dummyHash = dummyHash
  }

  /** Builds the directory; hashes one random dummy password for unknown handles. */
  static async create(users: readonly SeedUser[]): Promise<UserDirectory> {
    const dummy = await hashPassword(crypto.randomUUID())
    return new UserDirectory(new Map(users.map((user) => [user.handle, user.passwordHash])), dummy)
  }

  /** Whether `handle` names a user. */
  has(handle: string): boolean {
    return this.#hashes.has(handle)
  }

  /**
   * Whether the password is the user's; false for an unknown handle, after the same work. The
   * check waits its turn among those of other client networks (limits/password-hash.ts).
   */
  async verify(handle: string, password: string, network?: string): Promise<boolean> {
    const stored = this.#hashes.get(handle)
    const matches = await verifyPasswordFor(network, password, stored ?? this.#dummyHash)
    return stored !== undefined && matches
  }
}
