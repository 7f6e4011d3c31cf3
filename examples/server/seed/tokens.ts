/** Putting the seed's tokens into a token store, memory or shared (`--store`). */
import { revokeToken, type TokenRecord, type TokenStore, TokenStoreError } from 'data-access-policy'

/** Options of {@link loadSeedTokens}. */
export interface LoadSeedTokensOptions {
  /** Where the one-line warnings go; `console.warn` by default. */
  readonly warn?: (line: string) => void
}

/**
 * Puts the seed's token records into a store, which may be shared with other instances and hold
 * what they (or the settings pages) changed since:
 *
 * - a token not in the store yet is saved as the seed has it (two instances starting together save
 *   it once);
 * - a token the seed marks `"revoked": true` is revoked in the store too: a revocation is permanent
 *   and only ever tightens, so a seed can revoke a stored token, never bring a revoked one back;
 * - otherwise the stored token stands — its scopes and expiry may have been changed on the settings
 *   pages — and when they differ from the seed's, one warning line says so (naming the token by
 *   its seed index, name, user and hint; never its value).
 *
 * @throws {TokenStoreError} when the store fails.
 * @example
 * await loadSeedTokens(tokens, seed.tokens)
 */
export async function loadSeedTokens(
  tokens: TokenStore,
  records: readonly TokenRecord[],
  options: LoadSeedTokensOptions = {},
): Promise<void> {
  const warn = options.warn ?? ((line: string) => console.warn(line))
  for (const [index, record] of records.entries()) {
    let stored = await tokens.findByHash(record.hash)
    if (stored === undefined) {
      try {
        await tokens.save(record)
        continue
      } catch (error) {
        // Another instance saved it in the meantime: theirs is the stored token.
        stored = error instanceof TokenStoreError ? await tokens.findByHash(record.hash) : undefined
        if (stored === undefined) throw error
      }
    }
    if (record.revokedAt !== undefined) {
      await revokeStored(tokens, stored, record.revokedAt)
      continue
    }
    if (stored.revokedAt !== undefined) continue
    const difference = describeDifference(stored, record)
    if (difference !== undefined) {
      warn(
        `warning: seed tokens[${index}] (${JSON.stringify(record.name)} of ${record.userId}, ${record.hint}) differs from the stored token, which stands: ${difference}`,
      )
    }
  }
}

async function revokeStored(tokens: TokenStore, stored: TokenRecord, now: number): Promise<void> {
  if (stored.revokedAt !== undefined) return
  try {
    await tokens.update(revokeToken(stored, now))
  } catch (error) {
    // Another instance revoked it first (a revocation cannot be rewritten): revoked either way.
    const again = error instanceof TokenStoreError ? await tokens.findById(stored.id) : undefined
    if (again?.revokedAt === undefined) throw error
  }
}

function sameScopes(a: TokenRecord, b: TokenRecord): boolean {
  const key = (record: TokenRecord) => [...record.scopes].sort().join(' ')
  return key(a) === key(b)
}

function expiryOf(record: TokenRecord): string {
  return record.expiresAt === undefined ? 'none' : new Date(record.expiresAt).toISOString()
}

// What differs between the stored token and the seed's, in words; undefined when nothing does.
function describeDifference(stored: TokenRecord, seeded: TokenRecord): string | undefined {
  const parts: string[] = []
  if (!sameScopes(stored, seeded)) {
    parts.push(`scopes "${stored.scopes.join(' ')}" (seed: "${seeded.scopes.join(' ')}")`)
  }
  if (stored.expiresAt !== seeded.expiresAt) {
    parts.push(`expiry ${expiryOf(stored)} (seed: ${expiryOf(seeded)})`)
  }
  return parts.length === 0 ? undefined : parts.join('; ')
}
