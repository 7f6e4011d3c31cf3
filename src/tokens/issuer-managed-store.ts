import { TokenStoreError } from '../errors.js'
import type { TokenRecord } from './token-record.js'
import type { TokenLookupContext, TokenStore } from './token-store.js'

/**
 * The part every store of tokens managed by another issuer shares (an introspecting store, a JWT
 * store): it looks tokens up by value and writes nothing. Creating, revoking and listing tokens is
 * the issuer's business, so those methods reject with a `TokenStoreError` naming the store, and a
 * recorded use is dropped. Internal to the package.
 */
export abstract class IssuerManagedStore implements TokenStore {
  readonly #kind: string

  /** `kind` names the store in errors: `'an introspection store'`. */
  constructor(kind: string) {
    this.#kind = kind
  }

  abstract findByHash(hash: string): TokenRecord | undefined
  abstract findByValue(
    value: string,
    context?: TokenLookupContext,
  ): TokenRecord | undefined | Promise<TokenRecord | undefined>

  async findById(_id: string): Promise<TokenRecord | undefined> {
    throw this.#readOnly()
  }

  async save(_record: TokenRecord): Promise<void> {
    throw this.#readOnly()
  }

  async update(_record: TokenRecord): Promise<void> {
    throw this.#readOnly()
  }

  async listByOwner(_userId: string): Promise<readonly TokenRecord[]> {
    throw this.#readOnly()
  }

  async touch(_id: string, _now: number): Promise<void> {}

  #readOnly(): TokenStoreError {
    return new TokenStoreError(`${this.#kind} is read-only: tokens are managed by their issuer`)
  }
}
