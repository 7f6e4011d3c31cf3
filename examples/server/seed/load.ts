/**
 * Loading a seed: validation (seed/schema.ts), then the secrets are replaced by what the server
 * keeps of them — scrypt hashes of passwords and client secrets, token records holding the SHA-256
 * of each token value. Nothing returned from here contains a secret.
 */
import { readFile } from 'node:fs/promises'
import { ConfigError, importApiToken, revokeToken, type TokenRecord } from 'data-access-policy'
import { hashPassword } from '../limits/password-hash.js'
import { quote } from './messages.js'
import { parseSeed, type SeedSpec } from './schema.js'

/** A user as the server keeps it. */
export interface SeedUser {
  readonly handle: string
  readonly passwordHash: string
}

/** An OAuth client as the server keeps it. */
export interface SeedOAuthClient {
  readonly id: string
  /** Absent for a public client. */
  readonly secretHash: string | undefined
  readonly redirectUris: readonly string[]
  readonly offline: boolean
  /** May call `POST /oauth/introspect` (a resource server's credential). */
  readonly introspect: boolean
  /** Every token request needs a DPoP proof (RFC 9449); `false` when absent. */
  readonly dpopBound?: boolean
}

/** A validated seed with its secrets hashed: what the server is built from. */
export interface Seed {
  readonly users: readonly SeedUser[]
  readonly organizations: SeedSpec['organizations']
  readonly datasets: SeedSpec['datasets']
  readonly workflows: SeedSpec['workflows']
  readonly tokens: readonly TokenRecord[]
  readonly clients: readonly SeedOAuthClient[]
  /** Resource servers, besides this server's API, that tokens may be issued for (RFC 8707). */
  readonly resources: SeedSpec['resources']
}

/**
 * Validates a parsed seed file and hashes its secrets.
 *
 * @throws {ConfigError} one line naming the field and quoting the bad value.
 * @example
 * const seed = await loadSeed(JSON.parse(text))
 */
export async function loadSeed(input: unknown, now: number = Date.now()): Promise<Seed> {
  const spec = parseSeed(input)
  const [users, clients] = await Promise.all([
    Promise.all(
      spec.users.map(async (user) => ({
        handle: user.handle,
        passwordHash: await hashPassword(user.password),
      })),
    ),
    Promise.all(
      spec.clients.map(async (client) => ({
        id: client.id,
        secretHash: client.secret === undefined ? undefined : await hashPassword(client.secret),
        redirectUris: client.redirectUris,
        offline: client.offline,
        introspect: client.introspect,
        dpopBound: client.dpopBound,
      })),
    ),
  ])
  const tokens = spec.tokens.map((token) => {
    const record = importApiToken({
      userId: token.user,
      name: token.name,
      scopes: token.scopes,
      value: token.value,
      now,
      ...(token.expiresAt === undefined ? {} : { expiresAt: token.expiresAt }),
    })
    return token.revoked ? revokeToken(record, now) : record
  })
  return {
    users,
    organizations: spec.organizations,
    datasets: spec.datasets,
    workflows: spec.workflows,
    tokens,
    clients,
    resources: spec.resources,
  }
}

/**
 * Reads and parses a seed file. Only reading and JSON syntax are checked here.
 *
 * @throws {ConfigError} naming `--seed` and quoting the file name, or the JSON error.
 */
export async function readSeedFile(file: string): Promise<unknown> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error'
    throw new ConfigError(['--seed'], `cannot read ${quote(file)} (${code})`, { cause: error })
  }
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new ConfigError(['--seed'], `${quote(file)} is not valid JSON: ${(error as Error).message}`, {
      cause: error,
    })
  }
}
