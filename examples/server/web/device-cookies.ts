/**
 * Device cookies (OWASP's defence against account lockout abuse): a browser the account signed in
 * from before gets a signed cookie naming the handle, and the sign-in page spares it the
 * per-account limit that password guesses from everywhere else run into (limits/abuse-limits.ts),
 * so an attacker who locks the account out for strangers does not lock its owner out. The cookie
 * is no credential: the password is still checked, and attempts with one device cookie have a
 * limit of their own, wherever they come from.
 *
 * Value: `ISSUED.NONCE.HANDLE.MAC` — issue time (epoch ms, base 36), a random nonce, the handle in
 * base64url and an HMAC-SHA256 of the rest under the sign-in key (shared by every instance of a
 * shared store), so a cookie issued by one instance is honoured by another.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto'
import { serializeCookie } from '../request/cookies.js'
import type { ApiRequest } from '../routes/route-set.js'
import { safeEqual } from './csrf.js'
import { cookieOptions, randomToken } from './sessions.js'

/** The device cookie's name. */
export const DEVICE_COOKIE = 'dap_device'

/** How long a device cookie is honoured after the sign-in that issued it. */
export const DEVICE_COOKIE_TTL_MS = 90 * 24 * 60 * 60_000

const VALUE_PATTERN = /^([0-9a-z]{1,11})\.([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]{1,100})\.([A-Za-z0-9_-]{43})$/

/**
 * Issues and checks device cookies.
 *
 * @example
 * const devices = new DeviceCookies(Date.now, signInKey)
 * const setCookie = devices.issue(request, 'alice') // after the password was right
 * devices.check(request, 'alice') // later: the device's id, or undefined
 */
export class DeviceCookies {
  readonly #now: () => number
  readonly #key: Uint8Array
  readonly #cookiePath: string

  /**
   * `key`: the sign-in key (32 random bytes); a fresh one of this process's own by default.
   * `cookiePath`: the cookie's `Path`, the pages' path prefix (page-paths.ts); `/` by default.
   */
  constructor(now: () => number, key: Uint8Array = randomBytes(32), cookiePath = '/') {
    this.#now = now
    this.#key = key
    this.#cookiePath = cookiePath
  }

  /** The `Set-Cookie` value of a new device cookie for `handle`. */
  issue(request: ApiRequest, handle: string): string {
    const unsigned = `${this.#now().toString(36)}.${randomToken()}.${Buffer.from(handle).toString('base64url')}`
    return serializeCookie(
      DEVICE_COOKIE,
      `${unsigned}.${this.#sign(unsigned)}`,
      cookieOptions(request, this.#cookiePath, DEVICE_COOKIE_TTL_MS / 1000),
    )
  }

  /**
   * The id of the request's device cookie when it is genuine, unexpired and names `handle` (a hash
   * of its nonce, so that limit keys never hold a cookie's value); otherwise undefined.
   */
  check(request: ApiRequest, handle: string): string | undefined {
    const match = VALUE_PATTERN.exec(request.cookies[DEVICE_COOKIE] ?? '')
    if (match === null) return undefined
    const [issued, nonce, named, mac] = match.slice(1) as [string, string, string, string]
    if (!safeEqual(mac, this.#sign(`${issued}.${nonce}.${named}`))) return undefined
    const age = this.#now() - Number.parseInt(issued, 36)
    // Written so that a NaN clock refuses the cookie.
    if (!(age >= 0 && age < DEVICE_COOKIE_TTL_MS)) return undefined
    if (Buffer.from(named, 'base64url').toString() !== handle) return undefined
    return createHash('sha256').update(nonce).digest('base64url')
  }

  #sign(unsigned: string): string {
    return createHmac('sha256', this.#key).update(`device:${unsigned}`).digest('base64url')
  }
}
