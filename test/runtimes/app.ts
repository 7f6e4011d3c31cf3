/**
 * The app every runtime serves (Node, Bun, Deno, workerd): the core checks of the runtime table
 * and a small Hono API behind the access policy, built from the published package (`dist/`).
 */

import {
  type AccessPolicy,
  compileExportRestrictions,
  createAccessPolicy,
  createApiToken,
  deny,
  MemoryTokenStore,
  type Resource,
} from 'data-access-policy'
import { jwkThumbprint } from 'data-access-policy/dpop'
import { type AccessEnv, accessControl } from 'data-access-policy/hono'
import { IntrospectionTokenStore } from 'data-access-policy/introspection'
import { JwtTokenStore } from 'data-access-policy/jwt'
import { createOAuthToken } from 'data-access-policy/oauth'
import { ANONYMOUS, tokenHashBackend } from 'data-access-policy/testing'
import { type Context, Hono } from 'hono'
import type { ConnInfo } from 'hono/conninfo'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'

const DATASETS: Readonly<Record<string, Resource>> = {
  'acme/open': { kind: 'dataset', publicLevel: 'data' },
  'acme/private': { kind: 'dataset', publicLevel: 'none' },
  // Alice and Bob edit it, but Bob's token is scoped to metadata.
  'acme/team': { kind: 'dataset', publicLevel: 'none', userLevel: 'edit' },
  'acme/capped': {
    kind: 'dataset',
    publicLevel: 'data',
    exportRestrictions: compileExportRestrictions({ maxRecords: 3 }),
  },
}

/** The runtime table's in-process columns, and the token values the HTTP checks use. */
export interface Probe {
  readonly runtime: string
  readonly hashBackend: string
  readonly decide: boolean
  readonly createApiToken: boolean
  readonly authenticate: boolean
  /** A policy guarding one resource accepts a token for it and refuses one for another (RFC 8707). */
  readonly audience: boolean
  /** The RFC 7662 store answers through the runtime's fetch machinery (Response, AbortSignal, btoa). */
  readonly introspect: boolean
  /**
   * The JWT store verifies an ES256 token against a JWKS (served in-process) with the runtime's Web
   * Crypto, and refuses an unsigned one.
   */
  readonly jwt: boolean
  readonly tokens: { readonly reader: string; readonly metadataOnly: string }
  /** A DPoP-bound token and its key's private JWK, for the client to sign proofs with (test plumbing). */
  readonly dpop: { readonly token: string; readonly privateJwk: Record<string, unknown> }
}

// The client's key is made where the token is issued: the runtime's WebCrypto makes it, and the
// runtime's WebCrypto (through the policy) verifies the proofs the client signs with it.
async function boundToken(tokens: MemoryTokenStore): Promise<Probe['dpop']> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true })
  const jkt = jwkThumbprint((await exportJWK(publicKey)) as Record<string, unknown>)!
  const token = createOAuthToken({ userId: 'alice', scopes: 'data.data', dpopJkt: jkt, now: Date.now() })
  await tokens.save(token.record)
  return { token: token.value, privateJwk: (await exportJWK(privateKey)) as Record<string, unknown> }
}

// Tokens are created on the first request, not at startup: workerd forbids random values there.
async function setUp(runtime: string, policy: AccessPolicy, tokens: MemoryTokenStore): Promise<Probe> {
  const reader = createApiToken({ userId: 'alice', name: 'reader', scopes: 'data.data', now: Date.now() })
  const metadataOnly = createApiToken({
    userId: 'bob',
    name: 'meta',
    scopes: 'data.metadata',
    now: Date.now(),
  })
  await tokens.save(reader.record)
  await tokens.save(metadataOnly.record)
  const authenticated = await policy.authenticate({
    authorization: [`Bearer ${reader.value}`],
    protocol: 'https',
    clientAddress: '127.0.0.1',
  })
  const principal = authenticated.ok ? authenticated.principal : ANONYMOUS
  const audience = await checkAudience(tokens)
  // An issuer answering in-process: what is checked is the store's use of the runtime's globals.
  const introspection = new IntrospectionTokenStore({
    endpoint: 'https://issuer.example/oauth/introspect',
    clientId: 'rs',
    clientSecret: 'rs-secret',
    fetch: async () =>
      Response.json({ active: true, scope: 'public data.data', sub: 'alice', token_type: 'Bearer' }),
  })
  const introspected = await introspection.findByValue(reader.value)
  const jwt = await checkJwt()
  return {
    runtime,
    hashBackend: tokenHashBackend(),
    decide:
      policy.authorize(principal, 'table.read', DATASETS['acme/open']).allowed &&
      !policy.authorize(principal, 'table.read', DATASETS['acme/private']).allowed,
    createApiToken: /^dap_[0-9A-Za-z]{38}$/.test(reader.value),
    authenticate: authenticated.ok && authenticated.principal.userId === 'alice',
    audience,
    introspect: introspected?.userId === 'alice' && introspected.scopes.includes('data.data'),
    jwt,
    tokens: { reader: reader.value, metadataOnly: metadataOnly.value },
    dpop: await boundToken(tokens),
  }
}

const API = 'https://data.example.test/api/v1'

async function checkAudience(tokens: MemoryTokenStore): Promise<boolean> {
  const policy = createAccessPolicy({ tokens, resource: API })
  const bound = (audience: string[]) =>
    createOAuthToken({ userId: 'alice', scopes: 'data.data', audience, now: Date.now() })
  const here = bound([API])
  const elsewhere = bound(['https://tools.example.test/mcp'])
  await tokens.save(here.record)
  await tokens.save(elsewhere.record)
  const present = (value: string) =>
    policy.authenticate({ authorization: [`Bearer ${value}`], protocol: 'https', clientAddress: '127.0.0.1' })
  const [accepted, refused] = await Promise.all([present(here.value), present(elsewhere.value)])
  return accepted.ok && !refused.ok && refused.decision.code === 'invalid_token'
}

async function checkJwt(): Promise<boolean> {
  const { privateKey, publicKey } = await generateKeyPair('ES256')
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }] }
  const issuer = 'https://idp.example.test/'
  const tokens = new JwtTokenStore({
    issuer,
    jwksUri: `${issuer}jwks`,
    algorithms: ['ES256'],
    fetch: async () => Response.json(jwks),
  })
  const policy = createAccessPolicy({ tokens, resource: API })
  const claims = { iss: issuer, sub: 'alice', aud: API, scope: 'openid data.data' }
  const signed = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'at+jwt' })
    .setExpirationTime('5m')
    .sign(privateKey)
  const b64 = (value: unknown) =>
    btoa(JSON.stringify(value)).replaceAll('=', '').replaceAll('+', '-').replaceAll('/', '_')
  const unsigned = `${b64({ alg: 'none' })}.${b64({ ...claims, exp: Math.floor(Date.now() / 1000) + 300 })}.AA`
  const present = (value: string) =>
    policy.authenticate({ authorization: [`Bearer ${value}`], protocol: 'https', clientAddress: '127.0.0.1' })
  const [accepted, refused] = await Promise.all([present(signed), present(unsigned)])
  return (
    accepted.ok &&
    accepted.principal.userId === 'alice' &&
    accepted.principal.scopes.has('data.data') &&
    !refused.ok &&
    refused.decision.code === 'invalid_token'
  )
}

async function* rows(count: number) {
  for (let i = 0; i < count; i++) yield { data: `${i}\n`, records: 1 }
}

const dataset = (c: Context<AccessEnv>) => {
  const key = `${c.req.param('owner')}/${c.req.param('name')}`
  return key === 'acme/team' && !['alice', 'bob'].includes(c.get('principal').userId ?? '')
    ? undefined
    : DATASETS[key]
}

/**
 * The Hono app of the runtime table; `getConnInfo` is the runtime's own.
 *
 * @example
 * const app = createRuntimeApp('bun', getConnInfo)
 */
export function createRuntimeApp(runtime: string, getConnInfo: (c: Context) => ConnInfo): Hono<AccessEnv> {
  const tokens = new MemoryTokenStore()
  const policy = createAccessPolicy({ tokens, realm: 'data-api' })
  const access = accessControl({ policy, getConnInfo })
  let probe: Promise<Probe> | undefined
  const app = new Hono<AccessEnv>()
  app.use(async (_c, next) => {
    probe ??= setUp(runtime, policy, tokens)
    await probe
    await next()
  })
  // Test plumbing only: a real host never hands token values out.
  app.get('/probe', async (c) => c.json(await probe))
  app.get('/api/v1/datasets/:owner/:name/metadata', access.require('dataset.metadata', dataset), (c) =>
    c.json({ dataset: c.req.param('name') }),
  )
  app.get('/api/v1/datasets/:owner/:name/rows', access.require('table.read', dataset), (c) => {
    const count = Number(c.req.query('n') ?? '2')
    return access.sendData(c, { body: 'x\n'.repeat(count), records: count, contentType: 'text/plain' })
  })
  app.get('/api/v1/datasets/:owner/:name/stream', access.require('table.read', dataset), (c) =>
    access.streamData(c, rows(Number(c.req.query('n') ?? '2')), { contentType: 'text/plain' }),
  )
  app.notFound((c) => access.sendDenial(c, deny('not_found')))
  return app
}
