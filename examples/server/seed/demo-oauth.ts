/**
 * The OAuth part of `npm start`'s banner for the demo seed: the endpoints, the demo clients, and a
 * `curl` line that starts a device flow (run as printed by test/server/cli.test.ts).
 */

/** The demo seed's OAuth clients (public demo values: never use them anywhere else). */
export const DEMO_CLIENTS = [
  // A public client: no secret, no refresh tokens.
  { id: 'demo-cli', redirectUris: ['http://127.0.0.1:8765/callback'] },
  // A confidential client with offline access: refresh tokens.
  {
    id: 'demo-app',
    secret: 'demo-app-secret-4Rk9wZ2pQ7xL0vN3',
    redirectUris: ['http://127.0.0.1:8765/callback'],
    offline: true,
  },
  // A resource server's credential: it may ask POST /oauth/introspect about tokens, nothing else.
  { id: 'demo-rs', secret: 'demo-rs-secret-8Tq2mV6yH1cJ5nB9', redirectUris: [], introspect: true },
  // A public client with offline access whose tokens are always DPoP-bound (RFC 9449): no token
  // request of it succeeds without a proof, and its refresh family is bound to the proof's key.
  {
    id: 'demo-dpop',
    redirectUris: ['http://127.0.0.1:8765/callback'],
    offline: true,
    dpopBound: true,
  },
] as const

/** The RFC 7636 Appendix B pair, so that the printed lines work as they are. */
export const DEMO_CODE_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'
export const DEMO_CODE_CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'

/**
 * The banner lines about OAuth for a server at `baseUrl`.
 *
 * @example
 * demoOAuthLines('http://127.0.0.1:3000')[0] // 'OAuth (docs/oauth.md), auth_url http://127.0.0.1:3000:'
 */
export function demoOAuthLines(baseUrl: string): string[] {
  const authorize = new URL('/oauth/authorize', baseUrl)
  authorize.search = new URLSearchParams({
    response_type: 'code',
    client_id: 'demo-cli',
    redirect_uri: DEMO_CLIENTS[0].redirectUris[0],
    scope: 'data.metadata',
    state: 'demo',
    code_challenge: DEMO_CODE_CHALLENGE,
    code_challenge_method: 'S256',
  }).toString()
  const [cli, app, rs, dpop] = DEMO_CLIENTS
  return [
    `OAuth (docs/oauth.md), auth_url ${baseUrl}:`,
    `  POST ${baseUrl}/oauth/device_authorization   GET ${baseUrl}/device`,
    `  GET  ${baseUrl}/oauth/authorize              POST ${baseUrl}/oauth/token`,
    `  clients: ${cli.id} (public)  ${app.id} (confidential, offline access; secret ${app.secret})`,
    `           ${rs.id} (a resource server: POST /oauth/introspect; secret ${rs.secret})`,
    `           ${dpop.id} (public, offline access, DPoP-bound: every token request needs a DPoP proof)`,
    '  sign in as alice / alice-demo-password, bob / bob-demo-password or carol / carol-demo-password',
    `  PKCE pair of RFC 7636 Appendix B: code_verifier=${DEMO_CODE_VERIFIER}`,
    '  open in a browser, approve, then redeem the code from the redirect (within 60 s):',
    `  ${authorize}`,
    '  # 200: start a device flow, then open verification_uri_complete and approve',
    `  curl -i -X POST '${baseUrl}/oauth/device_authorization' -d client_id=${cli.id} -d scope=data.metadata -d code_challenge=${DEMO_CODE_CHALLENGE} -d code_challenge_method=S256`,
  ]
}
