/**
 * Password hashing for seeded users and client secrets: scrypt from node:crypto (RFC 7914), with a
 * random salt per password, stored as `scrypt$N$r$p$salt$hash` so the cost can change later.
 */
import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto'
import { HashQueue } from './hash-queue.js'

const KEY_LENGTH = 32
const DEFAULT_COST: Required<Pick<ScryptOptions, 'N' | 'r' | 'p'>> = { N: 16_384, r: 8, p: 1 }

/**
 * Password checks that run at once, for the whole process: two keep both cores of a small machine
 * busy while leaving libuv's other threads to file and DNS work.
 */
export const MAX_CONCURRENT_PASSWORD_CHECKS = 2

// One queue per process: every server in it shares the CPU the checks compete for.
const CHECKS = new HashQueue(MAX_CONCURRENT_PASSWORD_CHECKS)

function derive(password: string, salt: Buffer, cost: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(
      password.normalize('NFC'),
      salt,
      KEY_LENGTH,
      { ...cost, maxmem: 64 * 1024 * 1024 },
      (error, key) => (error ? reject(error) : resolve(key)),
    )
  })
}

/**
 * Hashes a password with scrypt and a fresh 16-byte salt. Asynchronous: it runs on the libuv pool,
 * so loading a seed with many users does not block the event loop.
 *
 * @example
 * const stored = await hashPassword('correct horse') // 'scrypt$16384$8$1$…$…'
 */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const key = await derive(password, salt, DEFAULT_COST)
  const { N, r, p } = DEFAULT_COST
  return ['scrypt', N, r, p, salt.toString('base64url'), key.toString('base64url')].join('$')
}

/**
 * Checks a password against a stored hash in constant time; a malformed hash never matches.
 *
 * @example
 * await verifyPassword('correct horse', stored) // true
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$')
  if (scheme !== 'scrypt' || salt === undefined || hash === undefined) return false
  const cost = { N: Number(n), r: Number(r), p: Number(p) }
  if (!Object.values(cost).every((value) => Number.isSafeInteger(value) && value > 0)) return false
  const expected = Buffer.from(hash, 'base64url')
  if (expected.length !== KEY_LENGTH) return false
  try {
    return timingSafeEqual(await derive(password, Buffer.from(salt, 'base64url'), cost), expected)
  } catch {
    return false
  }
}

/**
 * {@link verifyPassword} for a request from the client `network` (limits/networks.ts), under the
 * process's cap on concurrent checks (limits/hash-queue.ts): a flood of checks from one network
 * cannot delay another network's check by more than one running check.
 *
 * @example
 * await verifyPasswordFor(guard.network(request.clientAddress), 'correct horse', stored) // true
 */
export function verifyPasswordFor(
  network: string | undefined,
  password: string,
  stored: string,
): Promise<boolean> {
  return CHECKS.run(network, () => verifyPassword(password, stored))
}
