/** The options of a JWT store, checked once when it is created. */
import { z } from 'zod'
import { configErrorFromZod } from '../config-error.js'
import { functionShape, isSecureEndpointUrl } from '../config-shapes.js'
import { MAX_AUDIENCE_SIZE } from '../tokens/audience.js'
import { isAsymmetricAlgorithm, isHmacAlgorithm, type JwtAlgorithm, KEY_TYPE_OF } from './jwt-algorithms.js'
import type { JwtClaims } from './jwt-claims.js'
import { DEFAULT_MAX_JWT_LENGTH } from './jwt-format.js'
import type { JwtTokenStoreOptions } from './jwt-token-store.js'

const SECURE_URL =
  'must be an absolute https URL (http only on a loopback host) without user info or fragment'
const MIN_SECRET_BYTES = 32
const DAY_MS = 86_400_000

const utf8 = new TextEncoder()

const optionsSchema = z
  .strictObject({
    issuer: z.string().min(1, 'must not be empty').max(2000),
    jwksUri: z.string().refine(isSecureEndpointUrl, SECURE_URL).optional(),
    secret: z
      .union([z.string().transform((text) => utf8.encode(text)), z.instanceof(Uint8Array)])
      .refine((bytes) => bytes.length >= MIN_SECRET_BYTES, `must be at least ${MIN_SECRET_BYTES} bytes`)
      .optional(),
    algorithms: z
      .array(
        z
          .string()
          .refine(
            (name) => isAsymmetricAlgorithm(name) || isHmacAlgorithm(name),
            'must be a JWS algorithm: RS256–512, PS256–512, ES256–512, EdDSA, Ed25519 or (with a secret) HS256–512',
          ),
      )
      .min(1, 'must name at least one algorithm'),
    audience: z
      .union([
        z
          .string()
          .min(1)
          .transform((one) => [one]),
        z.array(z.string().min(1)).min(1).max(MAX_AUDIENCE_SIZE),
      ])
      .optional(),
    audienceClaim: z.enum(['aud', 'client_id']).default('aud'),
    requireTyp: z.boolean().default(false),
    clockToleranceSeconds: z.number().int().min(0).max(300).default(5),
    claimsToScopes: functionShape<(claims: JwtClaims) => readonly string[]>().optional(),
    cooldownMs: z.number().int().min(1000).max(3_600_000).default(30_000),
    refreshIntervalMs: z.number().int().min(1000).max(DAY_MS).default(600_000),
    keysMaxAgeMs: z
      .number()
      .int()
      .min(1000)
      .max(7 * DAY_MS)
      .default(3_600_000),
    timeoutMs: z.number().int().positive().max(60_000).default(1500),
    cacheTtlMs: z.number().int().min(0).max(300_000).default(60_000),
    maxEntries: z.number().int().min(1).max(1_000_000).default(10_000),
    maxTokenLength: z.number().int().min(1024).max(65_536).default(DEFAULT_MAX_JWT_LENGTH),
    fetch: functionShape<typeof fetch>().optional(),
    now: functionShape<() => number>().default(() => Date.now),
  })
  .superRefine((o, ctx) => {
    const hmac = o.algorithms.filter(isHmacAlgorithm)
    if (o.secret === undefined) {
      if (hmac.length > 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['algorithms'],
          message: `${hmac[0]} is an HMAC algorithm: it needs a secret, and a JWKS store allows asymmetric algorithms only`,
        })
      }
      if (o.jwksUri === undefined && !isSecureEndpointUrl(o.issuer)) {
        ctx.addIssue({ code: 'custom', path: ['issuer'], message: `${SECURE_URL}, to discover its JWKS` })
      }
    } else {
      if (o.jwksUri !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['secret'], message: 'must not be given with jwksUri' })
      }
      if (hmac.length !== o.algorithms.length) {
        ctx.addIssue({
          code: 'custom',
          path: ['algorithms'],
          message: 'must all be HMAC algorithms with a secret',
        })
      }
    }
    if (o.audienceClaim === 'client_id' && o.audience === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['audience'],
        message: 'must name the client ids to accept when audienceClaim is "client_id"',
      })
    }
    if (o.keysMaxAgeMs < o.refreshIntervalMs) {
      ctx.addIssue({ code: 'custom', path: ['keysMaxAgeMs'], message: 'must be at least refreshIntervalMs' })
    }
  })

/** The checked options, with defaults. Internal to the package. */
export type ParsedJwtTokenStoreOptions = Omit<
  z.output<typeof optionsSchema>,
  'algorithms' | 'jwksUri' | 'secret' | 'audience' | 'claimsToScopes' | 'fetch'
> & {
  readonly algorithms: readonly JwtAlgorithm[]
  readonly jwksUri: string | undefined
  readonly secret: Uint8Array | undefined
  readonly audience: readonly string[] | undefined
  readonly claimsToScopes: ((claims: JwtClaims) => readonly string[]) | undefined
  readonly fetch: typeof fetch | undefined
  /** The JWK key types the allowed asymmetric algorithms verify with. */
  readonly keyTypes: ReadonlySet<string>
}

/**
 * Checks a JWT store's options. Internal to the package.
 *
 * @throws {ConfigError} naming the offending option.
 */
export function parseJwtTokenStoreOptions(options: JwtTokenStoreOptions): ParsedJwtTokenStoreOptions {
  const parsed = optionsSchema.safeParse(options)
  if (!parsed.success) throw configErrorFromZod(parsed.error, ['options'])
  const o = parsed.data
  const algorithms = o.algorithms as JwtAlgorithm[]
  return {
    ...o,
    algorithms,
    jwksUri: o.jwksUri,
    secret: o.secret,
    audience: o.audience,
    claimsToScopes: o.claimsToScopes,
    fetch: o.fetch,
    keyTypes: new Set(algorithms.filter(isAsymmetricAlgorithm).map((name) => KEY_TYPE_OF[name])),
  }
}
