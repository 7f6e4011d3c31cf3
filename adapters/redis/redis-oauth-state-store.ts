import type { Redis } from 'ioredis'
import { z } from 'zod'
import { configErrorFromZod } from '../../src/config-error.js'
import { TokenStoreError } from '../../src/errors.js'
import {
  type AuthorizationCodeRecord,
  authorizationCodeRecordSchema,
  type DeviceGrantRecord,
  deviceGrantRecordSchema,
  type RefreshFamilyRecord,
  refreshFamilyRecordSchema,
} from '../../src/oauth/oauth-state-records.js'
import type { OAuthStateStore } from '../../src/oauth/oauth-state-store.js'
import { live, requireStoreNow, validateRecord } from '../../src/tokens/store-records.js'
import { generateRandomBase62 } from '../../src/tokens/token-format.js'
import {
  closeConnection,
  connectionOptionsShape,
  defineScript,
  type LuaScript,
  openConnection,
  type RedisTarget,
  whenReady,
} from './connection.js'
import {
  FIND_INDEXED,
  RECORD_FAILURE,
  REPLACE_CODE,
  REPLACE_FAMILY,
  REPLACE_GRANT,
  SAVE_CODE,
  SAVE_FAMILY,
  SAVE_GRANT,
} from './oauth-state-scripts.js'
import { decodeRecord, storeFailure } from './record-codec.js'

/** Options of {@link RedisOAuthStateStore}. */
export interface RedisOAuthStateStoreOptions {
  /** Where Redis is: `redis://HOST:PORT`, or ioredis options (TLS, Sentinel, password). */
  readonly redis: RedisTarget
  /** Prefix of every key; default `dap:`, the token store's. */
  readonly keyPrefix?: string
  /** How long one Redis command may take before it fails, in ms; default 500. */
  readonly commandTimeoutMs?: number
}

const optionsSchema = z.strictObject(connectionOptionsShape)

// Redis keeps a record this long past its retention, so that an instance whose clock runs a little
// behind still finds it; `find*` compares `retainUntil` with the caller's clock either way.
const EXPIRY_GRACE_MS = 60_000

type Retained = { readonly createdAt: number; readonly retainUntil: number }

function expiryOf(record: Retained): number {
  return Math.max(1, record.retainUntil - record.createdAt) + EXPIRY_GRACE_MS
}

function parseCount(text: string | null, what: string): number | undefined {
  if (text === null) return undefined
  if (!/^(0|[1-9][0-9]{0,15})$/.test(text)) throw new TokenStoreError(`Redis answered a malformed ${what}`)
  return Number(text)
}

/**
 * An {@link OAuthStateStore} on a Redis server shared by every instance of a service: authorization
 * codes, device grants, refresh-token families and wrong user-code counters, each with a Redis
 * expiry that follows its `retainUntil`. Every `replace*` is a compare-and-set on `version` in a Lua
 * script, so of two instances redeeming one code or device code at once exactly one wins. Records
 * are validated on the way in and again on the way out; an answer that is not a valid record, a
 * timeout or a lost connection is a `TokenStoreError` (the token endpoint answers 503).
 *
 * @example
 * const state = new RedisOAuthStateStore({ redis: 'redis://127.0.0.1:6379' })
 * await state.ready()
 * await handleTokenRequest(params, { state, tokens, clients, now: Date.now() })
 */
export class RedisOAuthStateStore implements OAuthStateStore {
  readonly #client: Redis
  readonly #prefix: string
  readonly #scripts: Readonly<Record<string, LuaScript>>

  /** Opens the connection. @throws {ConfigError} naming the offending option. */
  constructor(options: RedisOAuthStateStoreOptions) {
    const parsed = optionsSchema.safeParse(options)
    if (!parsed.success) throw configErrorFromZod(parsed.error, ['options'])
    const { redis, keyPrefix, commandTimeoutMs } = parsed.data
    this.#prefix = `${keyPrefix}oauth:`
    this.#client = openConnection(redis, commandTimeoutMs, `dap-oauth-${generateRandomBase62(16)}`)
    this.#client.on('error', () => {})
    const sources = {
      saveCode: SAVE_CODE,
      replaceCode: REPLACE_CODE,
      saveGrant: SAVE_GRANT,
      replaceGrant: REPLACE_GRANT,
      saveFamily: SAVE_FAMILY,
      replaceFamily: REPLACE_FAMILY,
      findIndexed: FIND_INDEXED,
      recordFailure: RECORD_FAILURE,
    }
    this.#scripts = Object.fromEntries(
      Object.entries(sources).map(([name, lua]) => [
        name,
        defineScript(this.#client, `dapOAuth${name[0]!.toUpperCase()}${name.slice(1)}`, lua),
      ]),
    )
  }

  /** Resolves once the connection is up; rejects after `timeoutMs`. */
  ready(timeoutMs = 5000): Promise<void> {
    return whenReady(this.#client, timeoutMs)
  }

  /** Closes the connection. */
  close(): Promise<void> {
    return closeConnection(this.#client)
  }

  async saveAuthorizationCode(record: AuthorizationCodeRecord): Promise<void> {
    const valid = validateRecord(authorizationCodeRecordSchema, record, 'authorization code record')
    const saved = await this.#run(
      'saveCode',
      'save an authorization code',
      [this.#codeKey(valid.hash)],
      [valid.version, valid.retainUntil, JSON.stringify(valid), expiryOf(valid)],
    )
    if (saved !== 1) throw new TokenStoreError('an authorization code with this hash exists')
  }

  async findAuthorizationCode(hash: string, now: number): Promise<AuthorizationCodeRecord | undefined> {
    requireStoreNow(now)
    const text = await this.#get(this.#codeKey(hash), 'find an authorization code')
    return live(this.#decode(authorizationCodeRecordSchema, text, 'authorization code record'), now)
  }

  async replaceAuthorizationCode(next: AuthorizationCodeRecord): Promise<boolean> {
    const valid = validateRecord(authorizationCodeRecordSchema, next, 'authorization code record')
    const replaced = await this.#run(
      'replaceCode',
      'replace an authorization code',
      [this.#codeKey(valid.hash)],
      [valid.version, valid.retainUntil, JSON.stringify(valid)],
    )
    return replaced === 1
  }

  async saveDeviceGrant(record: DeviceGrantRecord): Promise<boolean> {
    const valid = validateRecord(deviceGrantRecordSchema, record, 'device grant record')
    const saved = await this.#run(
      'saveGrant',
      'save a device grant',
      [this.#grantKey(valid.deviceCodeHash), this.#userCodeKey(valid.userCodeHash)],
      [
        valid.version,
        valid.retainUntil,
        valid.userCodeHash,
        JSON.stringify(valid),
        expiryOf(valid),
        valid.createdAt,
        this.#grantKey(''),
        valid.deviceCodeHash,
      ],
    )
    if (saved === -1) throw new TokenStoreError('a device grant with this hash exists')
    return saved === 1
  }

  async findDeviceGrant(deviceCodeHash: string, now: number): Promise<DeviceGrantRecord | undefined> {
    requireStoreNow(now)
    const text = await this.#get(this.#grantKey(deviceCodeHash), 'find a device grant')
    return live(this.#decode(deviceGrantRecordSchema, text, 'device grant record'), now)
  }

  async findDeviceGrantByUserCode(userCodeHash: string, now: number): Promise<DeviceGrantRecord | undefined> {
    requireStoreNow(now)
    const text = await this.#run(
      'findIndexed',
      'find a device grant',
      [this.#userCodeKey(userCodeHash)],
      [this.#grantKey('')],
    )
    const grant = this.#decode(deviceGrantRecordSchema, text, 'device grant record')
    if (grant !== undefined && grant.userCodeHash !== userCodeHash) {
      throw new TokenStoreError('Redis answered a user-code index that points to another grant')
    }
    return live(grant, now)
  }

  async replaceDeviceGrant(next: DeviceGrantRecord): Promise<boolean> {
    const valid = validateRecord(deviceGrantRecordSchema, next, 'device grant record')
    const replaced = await this.#run(
      'replaceGrant',
      'replace a device grant',
      [this.#grantKey(valid.deviceCodeHash), this.#userCodeKey(valid.userCodeHash)],
      [valid.version, valid.retainUntil, valid.userCodeHash, JSON.stringify(valid), valid.deviceCodeHash],
    )
    if (replaced === -1) throw new TokenStoreError('a device grant cannot change its user code')
    return replaced === 1
  }

  async saveRefreshFamily(record: RefreshFamilyRecord): Promise<void> {
    const valid = validateRecord(refreshFamilyRecordSchema, record, 'refresh family record')
    const saved = await this.#run(
      'saveFamily',
      'save a refresh family',
      [this.#familyKey(valid.id)],
      [
        valid.version,
        valid.retainUntil,
        valid.tokenHashes.join(' '),
        JSON.stringify(valid),
        expiryOf(valid),
        valid.id,
        this.#familyTokenKey(''),
      ],
    )
    if (saved === -1) throw new TokenStoreError(`refresh family ${valid.id} exists`)
    if (saved === -2) throw new TokenStoreError('a refresh token hash belongs to another family')
  }

  async findRefreshFamily(id: string, now: number): Promise<RefreshFamilyRecord | undefined> {
    requireStoreNow(now)
    const text = await this.#get(this.#familyKey(id), 'find a refresh family')
    return live(this.#decode(refreshFamilyRecordSchema, text, 'refresh family record'), now)
  }

  async findRefreshFamilyByTokenHash(hash: string, now: number): Promise<RefreshFamilyRecord | undefined> {
    requireStoreNow(now)
    const text = await this.#run(
      'findIndexed',
      'find a refresh family',
      [this.#familyTokenKey(hash)],
      [this.#familyKey('')],
    )
    const family = this.#decode(refreshFamilyRecordSchema, text, 'refresh family record')
    if (family !== undefined && !family.tokenHashes.includes(hash)) {
      throw new TokenStoreError('Redis answered a token index that points to another family')
    }
    return live(family, now)
  }

  async replaceRefreshFamily(next: RefreshFamilyRecord): Promise<boolean> {
    const valid = validateRecord(refreshFamilyRecordSchema, next, 'refresh family record')
    const replaced = await this.#run(
      'replaceFamily',
      'replace a refresh family',
      [this.#familyKey(valid.id)],
      [
        valid.version,
        valid.retainUntil,
        valid.tokenHashes.join(' '),
        JSON.stringify(valid),
        valid.id,
        this.#familyTokenKey(''),
      ],
    )
    if (replaced === -2) throw new TokenStoreError('a refresh token hash belongs to another family')
    return replaced === 1
  }

  async countUserCodeFailures(key: string, now: number): Promise<number> {
    requireStoreNow(now)
    let fields: (string | null)[]
    try {
      fields = await this.#client.hmget(this.#failureKey(key), 'c', 'reset')
    } catch (error) {
      throw storeFailure('count wrong user codes', error)
    }
    const count = parseCount(fields[0] ?? null, 'failure count')
    const resetAt = parseCount(fields[1] ?? null, 'failure window')
    return count !== undefined && resetAt !== undefined && now < resetAt ? count : 0
  }

  async recordUserCodeFailure(key: string, now: number, windowMs: number): Promise<number> {
    requireStoreNow(now)
    if (!Number.isSafeInteger(windowMs) || windowMs <= 0) {
      throw new TokenStoreError('windowMs must be a positive integer')
    }
    const count = await this.#run(
      'recordFailure',
      'count a wrong user code',
      [this.#failureKey(key)],
      [now, now + windowMs, windowMs + EXPIRY_GRACE_MS],
    )
    if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 1) {
      throw new TokenStoreError('Redis answered a malformed failure count')
    }
    return count
  }

  async #run(
    script: string,
    action: string,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<unknown> {
    try {
      return await this.#scripts[script]!(keys, args)
    } catch (error) {
      throw storeFailure(action, error)
    }
  }

  async #get(key: string, action: string): Promise<string | null> {
    try {
      return await this.#client.hget(key, 'd')
    } catch (error) {
      throw storeFailure(action, error)
    }
  }

  #decode<T>(schema: z.ZodType<T>, text: unknown, what: string): T | undefined {
    if (text === null || text === undefined) return undefined
    if (typeof text !== 'string') throw new TokenStoreError(`Redis answered a malformed ${what}`)
    return decodeRecord(schema, text, what)
  }

  #codeKey(hash: string): string {
    return `${this.#prefix}code:${hash}`
  }

  #grantKey(deviceCodeHash: string): string {
    return `${this.#prefix}grant:${deviceCodeHash}`
  }

  #userCodeKey(userCodeHash: string): string {
    return `${this.#prefix}user-code:${userCodeHash}`
  }

  #familyKey(id: string): string {
    return `${this.#prefix}family:${id}`
  }

  #familyTokenKey(hash: string): string {
    return `${this.#prefix}family-token:${hash}`
  }

  #failureKey(key: string): string {
    return `${this.#prefix}user-code-failures:${key}`
  }
}
