/**
 * What an issuer's RFC 7662 answer becomes: the record the policy decides on, or nothing for an
 * inactive token. Anything that does not make a record this library can use is a `TokenStoreError`
 * (503), never an allow.
 */
import { z } from 'zod'
import { parseScopes } from '../decisions/scopes.js'
import { TokenStoreError } from '../errors.js'
import { normalizeAudience } from '../tokens/audience.js'
import { tokenKindOf, tokenValueHint } from '../tokens/token-format.js'
import { type TokenRecord, tokenRecordSchema } from '../tokens/token-record.js'

// RFC 7662 §2.2, as far as a guard needs it. An active answer must say what the token is for
// (`scope`, `sub`) and that it is a bearer or DPoP access token; anything else is garbage, never an
// allow. A DPoP-bound token (RFC 9449 §6.2) comes with `cnf.jkt`, the thumbprint the guard then
// demands a proof by; a `cnf` of any other kind is garbage too.
const secondsSchema = z
  .number()
  .int()
  .nonnegative()
  .max(Number.MAX_SAFE_INTEGER / 1000)
const activeSchema = z.object({
  active: z.literal(true),
  scope: z.string(),
  sub: z.string().min(1).max(256),
  token_type: z.string().regex(/^(?:bearer|dpop)$/i),
  // Only a key binding this library can check: any other confirmation (`x5t#S256` of RFC 8705 mTLS)
  // would be dropped and the token accepted unbound, so an answer carrying one is refused.
  cnf: z.strictObject({ jkt: z.string() }).optional(),
  client_id: z.string().optional(),
  exp: secondsSchema.optional(),
  iat: secondsSchema.optional(),
  jti: z.string().optional(),
  // RFC 7662 §2.2: one audience as a string, or several as an array; each is checked below as a
  // resource identifier (RFC 8707 §2).
  aud: z.union([z.string(), z.array(z.unknown())]).optional(),
})
const answerSchema = z.union([z.object({ active: z.literal(false) }), activeSchema])

const TOKEN_ID = /^[A-Za-z0-9_-]{1,64}$/
const REMOTE_NAME = 'Introspected token'

/**
 * The issuer's answer about the token `value` (whose SHA-256 is `hash`) as the record the policy
 * decides on, `undefined` for an inactive token. Internal to the package.
 *
 * @throws {TokenStoreError} for an answer that is not RFC 7662 JSON for a bearer or DPoP token, or
 *   that makes no record this library can use (an unknown scope, a malformed `aud` or `cnf.jkt`, a
 *   DPoP token without `cnf.jkt`).
 */
export function recordOfAnswer(
  answer: unknown,
  value: string,
  hash: string,
  now: number,
): TokenRecord | undefined {
  const parsed = answerSchema.safeParse(answer)
  if (!parsed.success) {
    throw new TokenStoreError('the introspection endpoint answered something that is not RFC 7662', {
      cause: parsed.error,
    })
  }
  const body = parsed.data
  if (!body.active) return undefined
  const dpopJkt = body.cnf?.jkt
  // A DPoP token whose key the answer does not name could only be accepted unbound: refused.
  if (dpopJkt === undefined && /^dpop$/i.test(body.token_type)) {
    throw new TokenStoreError('the introspection endpoint answered a DPoP token without cnf.jkt')
  }
  const kind = tokenKindOf(value)
  try {
    const scopes = parseScopes(body.scope).granted
    const audience =
      body.aud === undefined
        ? undefined
        : normalizeAudience(typeof body.aud === 'string' ? [body.aud] : body.aud)
    return tokenRecordSchema.parse({
      id: body.jti !== undefined && TOKEN_ID.test(body.jti) ? body.jti : `rt_${hash.slice(0, 16)}`,
      kind,
      userId: body.sub,
      name: REMOTE_NAME,
      scopes,
      hash,
      hint: tokenValueHint(value),
      createdAt: body.iat === undefined ? now : body.iat * 1000,
      ...(body.exp !== undefined && { expiresAt: body.exp * 1000 }),
      ...(kind === 'oauth' && body.client_id !== undefined && { clientId: body.client_id }),
      ...(audience !== undefined && { audience }),
      ...(dpopJkt !== undefined && { dpopJkt }),
    })
  } catch (cause) {
    throw new TokenStoreError('the introspection endpoint answered a token this library cannot use', {
      cause,
    })
  }
}
