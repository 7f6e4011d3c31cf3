/** Putting the seed's tokens into a token store, memory or shared (`--store`). */
import { type TokenRecord, type TokenStore, TokenStoreError } from '../../src/index.js'

/**
 * Saves the seed's token records unless a record with the same hash is already there, so that an
 * instance joining a shared store keeps what the others changed (a revocation, a new name) and two
 * instances starting together save each token once.
 *
 * @example
 * await loadSeedTokens(tokens, seed.tokens)
 */
export async function loadSeedTokens(tokens: TokenStore, records: readonly TokenRecord[]): Promise<void> {
  for (const record of records) {
    if ((await tokens.findByHash(record.hash)) !== undefined) continue
    try {
      await tokens.save(record)
    } catch (error) {
      // Another instance saved it in the meantime: theirs stands.
      if (!(error instanceof TokenStoreError) || (await tokens.findByHash(record.hash)) === undefined) {
        throw error
      }
    }
  }
}
