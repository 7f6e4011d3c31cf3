/**
 * The OAuth clients of the seed, as the core's `LookupClient` sees them.
 *
 * The seed keeps client secrets as scrypt hashes (seed/load.ts): the server holds no secret, and a
 * leaked hash of a short secret is slow to brute-force. The core compares SHA-256 hashes
 * (`hashClientSecret`) in constant time, so for each token or device authorization request the
 * registry checks the presented secret against its scrypt hash first and hands the core a client
 * whose `secretHash` is the SHA-256 of that secret only when scrypt agreed — otherwise a value that
 * no SHA-256 ever equals. Either way the core stays the one place that decides `invalid_client`.
 * A secret scrypt accepted is recognised for {@link VERIFIED_SECRET_TTL_MS} without scrypt, so that
 * a resource server introspecting all day pays for one check every ten minutes.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import {
  hashClientSecret,
  isRegisteredClientId,
  type LookupClient,
  type OAuthClient,
  type OAuthParams,
  registeredClient,
} from 'data-access-policy/oauth'
import { UNKNOWN_NETWORK } from '../limits/networks.js'
import { verifyPasswordFor } from '../limits/password-hash.js'
import type { SeedOAuthClient } from '../seed/load.js'
import type { FetchAdmission, MetadataDocumentClients } from './metadata-clients.js'
import type { RegistrationStore } from './registrations.js'

// Never a SHA-256 in hex (64 lower-case hex digits), so the core's comparison always fails on it.
const NO_MATCH = 'no-secret-matches'

/**
 * How long a confidential client's secret, once scrypt agreed, is recognised without scrypt: a
 * resource server introspects many times a minute, and one scrypt each would fill the hash queue.
 */
export const VERIFIED_SECRET_TTL_MS = 10 * 60_000

/**
 * Who vouches for a client: the operator (the seed), the client's own metadata document on its
 * host, or nobody (it registered itself, RFC 7591).
 */
export type ClientOrigin = 'operator' | 'metadata-document' | 'registered'

/** A client as the pages show it. */
export interface ClientIdentity {
  readonly id: string
  /** What the consent page calls the client: an operator client's id, else its `client_name`. */
  readonly name: string
  readonly confidential: boolean
  readonly offline: boolean
  /** Absent: an operator's client (consents stored before this field existed are all such). */
  readonly origin?: ClientOrigin
  /** The host a metadata document was fetched from. */
  readonly host?: string
}

/** The clients that identify themselves, besides the seed's. */
export interface SelfIdentifiedClients {
  /**
   * Metadata-document clients, and what admits a fetch for the requesting network (the
   * `clientMetadata` limit); absent: a URL `client_id` is unknown.
   */
  readonly documents?: {
    readonly clients: MetadataDocumentClients
    readonly admit: (network: string) => ReturnType<FetchAdmission>
  }
  /** Dynamically registered clients; absent: registration is off. */
  readonly registrations?: RegistrationStore
}

function formDecode(text: string): string {
  return decodeURIComponent(text.replaceAll('+', ' '))
}

// The id and secret an `Authorization: Basic` header carries, read leniently: when this reading
// and the core's strict one disagree, the core refuses the header before it ever looks the client up.
function basicCredentials(authorization: string | undefined): { id: string; secret: string } | undefined {
  const match = /^basic +([A-Za-z0-9+/]+=*)$/i.exec(authorization ?? '')
  if (match === null) return undefined
  try {
    const decoded = Buffer.from(match[1]!, 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    if (colon === -1) return undefined
    return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) }
  } catch {
    return undefined
  }
}

function bodySecret(params: OAuthParams): string | undefined {
  const value = params.client_secret
  return typeof value === 'string' && value !== '' ? value : undefined
}

/** The seed's OAuth clients, looked up by id. */
export class ClientRegistry {
  readonly #clients: ReadonlyMap<string, SeedOAuthClient>
  readonly #now: () => number
  // The last secret scrypt accepted for each client, as an HMAC under a key that never leaves this
  // process (so the map is no offline guessing aid), with when it stops counting. One entry per
  // registered client at most; a wrong secret is never remembered, so it always costs its check.
  readonly #verified = new Map<string, { readonly mac: Buffer; readonly until: number }>()
  readonly #macKey = randomBytes(32)
  readonly #others: SelfIdentifiedClients

  constructor(
    clients: readonly SeedOAuthClient[],
    now: () => number = Date.now,
    others: SelfIdentifiedClients = {},
  ) {
    this.#clients = new Map(clients.map((client) => [client.id, client]))
    this.#now = now
    this.#others = others
  }

  /**
   * How the pages name any client the endpoints know: an operator client, a metadata-document
   * client (with its document's host) or a registered one; `undefined` for an unknown id. A
   * document that must be fetched counts against `network`'s limit (the requesting client's).
   *
   * @example
   * const client = await registry.describe(authorization.clientId, guard.network(request.clientAddress))
   */
  async describe(id: string, network: string = UNKNOWN_NETWORK): Promise<ClientIdentity | undefined> {
    const operator = this.identify(id)
    if (operator !== undefined) return operator
    if (this.#others.documents !== undefined && isUrlClientId(id)) {
      const found = await this.#document(id, network)
      if (found === undefined) return undefined
      const { client, host } = found
      return {
        id,
        name: client.name ?? host,
        confidential: false,
        offline: false,
        origin: 'metadata-document',
        host,
      }
    }
    const client = await this.#selfRegistered(id)
    if (client === undefined) return undefined
    return { id, name: client.name ?? id, confidential: false, offline: false, origin: 'registered' }
  }

  /**
   * Records that a token was issued to `id`, so that a registered client's registration lives on
   * (oauth/registrations.ts); nothing for other clients.
   *
   * @example
   * if (response.status === 200) await registry.markUsed(params.client_id)
   */
  async markUsed(id: string): Promise<void> {
    if (this.#others.registrations !== undefined && isRegisteredClientId(id) && !this.#clients.has(id)) {
      await this.#others.registrations.markUsed(id)
    }
  }

  // A metadata-document or registered client: public, never offline. Only for an id the seed lacks.
  async #selfIdentified(id: string, network: string): Promise<OAuthClient | undefined> {
    if (this.#others.documents !== undefined && isUrlClientId(id)) {
      return (await this.#document(id, network))?.client
    }
    return this.#selfRegistered(id)
  }

  // A document's client; a fetch is counted against `network` (MetadataLookupRefused when over).
  #document(id: string, network: string) {
    const documents = this.#others.documents!
    return documents.clients.lookup(id, () => documents.admit(network))
  }

  async #selfRegistered(id: string): Promise<OAuthClient | undefined> {
    if (this.#others.registrations === undefined || !isRegisteredClientId(id)) return undefined
    const registration = await this.#others.registrations.get(id)
    return registration === undefined ? undefined : registeredClient(id, registration)
  }

  /** How the pages name a registered client, or `undefined` for an unknown id. */
  identify(id: string): ClientIdentity | undefined {
    const client = this.#clients.get(id)
    if (client === undefined) return undefined
    return {
      id: client.id,
      name: client.id,
      confidential: client.secretHash !== undefined,
      offline: client.offline,
    }
  }

  /**
   * The lookup for the authorization endpoint, which never sees a secret: only the id, the redirect
   * URIs and offline access matter there. A metadata document it must fetch counts against the
   * requesting client's `network`, and rejects with `MetadataLookupRefused` when over the limit or
   * when too many fetches are in flight (oauth/metadata-clients.ts).
   *
   * @example
   * await validateAuthorizationRequest(params, registry.lookupFrom(guard.network(request.clientAddress)))
   */
  lookupFrom(network: string): LookupClient {
    return (id) => {
      const client = this.#clients.get(id)
      if (client === undefined) return this.#selfIdentified(id, network)
      return this.#asCoreClient(client, client.secretHash === undefined ? undefined : NO_MATCH)
    }
  }

  /**
   * The lookup for one token or device authorization request: the secret it presents (`Basic`
   * header or `client_secret`) is checked against the client's scrypt hash, once, in the turn of
   * the requesting client `network` (limits/password-hash.ts). With `selfIdentified: false` (the
   * device flow), only the seed's clients are known: a metadata document proves nothing without a
   * redirect URI, so anyone could start a device grant under another's document and name.
   *
   * @example
   * const clients = registry.lookupFor(params, request.authorization[0], guard.network(request.clientAddress))
   * await handleTokenRequest(params, { clients, state, tokens, now })
   */
  lookupFor(
    params: OAuthParams,
    authorization: string | undefined,
    network?: string,
    { selfIdentified = true }: { readonly selfIdentified?: boolean } = {},
  ): LookupClient {
    const presented = basicCredentials(authorization)?.secret ?? bodySecret(params)
    // One answer per id for the request: a second look-up (the core's, after checkFirst) reuses it.
    const answers = new Map<string, Promise<OAuthClient | undefined>>()
    const lookUp = async (id: string): Promise<OAuthClient | undefined> => {
      const client = this.#clients.get(id)
      if (client === undefined)
        return selfIdentified ? this.#selfIdentified(id, network ?? UNKNOWN_NETWORK) : undefined
      if (client.secretHash === undefined) return this.#asCoreClient(client, undefined)
      const verified = presented !== undefined && (await this.#verify(client, presented, network))
      return this.#asCoreClient(client, verified ? hashClientSecret(presented) : NO_MATCH)
    }
    return (id) => {
      let answer = answers.get(id)
      if (answer === undefined) {
        answer = lookUp(id)
        answers.set(id, answer)
      }
      return answer
    }
  }

  /**
   * Looks up, through `clients` (from {@link lookupFor}), the client the request names (`Basic`
   * header, else `client_id`), so that its secret is checked now, before what must not wait on
   * the hash queue is counted; the core's own look-up then reuses the answer. A failure is left
   * for that look-up to meet.
   *
   * @example
   * const clients = registry.lookupFor(params, authorization, network)
   * await registry.checkFirst(clients, params, authorization)
   */
  async checkFirst(
    clients: LookupClient,
    params: OAuthParams,
    authorization: string | undefined,
  ): Promise<void> {
    const named = basicCredentials(authorization)?.id ?? params.client_id
    if (typeof named === 'string' && named !== '') await Promise.resolve(clients(named)).catch(() => {})
  }

  /**
   * Whether the request authenticates, by a secret scrypt accepted within the TTL, as a client
   * allowed to introspect: a check without scrypt, so that only a proven resource server counts
   * against introspection's larger limit, and everyone else against the token endpoint's.
   *
   * @example
   * const limit = registry.isKnownIntrospector(params, authorization) ? 'introspection' : 'token'
   */
  isKnownIntrospector(params: OAuthParams, authorization: string | undefined): boolean {
    const basic = basicCredentials(authorization)
    const id = basic?.id ?? params.client_id
    const presented = basic?.secret ?? bodySecret(params)
    if (typeof id !== 'string' || presented === undefined) return false
    const client = this.#clients.get(id)
    return (
      client?.introspect === true && client.secretHash !== undefined && this.#remembers(client, presented)
    )
  }

  // Whether `presented` is the secret scrypt accepted for the client within the TTL.
  #remembers(client: SeedOAuthClient, presented: string): boolean {
    const known = this.#verified.get(client.id)
    // Written as "before" so that a NaN clock never counts as within the TTL.
    if (known === undefined || !(this.#now() < known.until)) return false
    return timingSafeEqual(known.mac, createHmac('sha256', this.#macKey).update(presented).digest())
  }

  // scrypt, unless this secret is the one scrypt accepted for the client within the TTL.
  async #verify(client: SeedOAuthClient, presented: string, network: string | undefined): Promise<boolean> {
    if (this.#remembers(client, presented)) return true
    if (!(await verifyPasswordFor(network, presented, client.secretHash!))) return false
    const mac = createHmac('sha256', this.#macKey).update(presented).digest()
    this.#verified.set(client.id, { mac, until: this.#now() + VERIFIED_SECRET_TTL_MS })
    return true
  }

  #asCoreClient(client: SeedOAuthClient, secretHash: string | undefined): OAuthClient {
    return {
      id: client.id,
      redirectUris: client.redirectUris,
      offline: client.offline,
      name: client.id,
      introspect: client.introspect,
      ...(client.dpopBound === true && { dpopBound: true }),
      ...(secretHash !== undefined && { secretHash }),
    }
  }
}

// A client id that names a metadata document: an http(s) URL (the document rules refuse the rest).
function isUrlClientId(id: string): boolean {
  return /^https?:\/\//i.test(id)
}
