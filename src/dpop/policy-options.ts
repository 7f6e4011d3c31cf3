import { z } from 'zod'
import type { DpopCheck } from '../authentication/dpop-authentication.js'
import { ConfigError } from '../errors.js'
import {
  DPOP_ALGORITHMS,
  DPOP_PROOF_LEEWAY_SECONDS,
  DPOP_PROOF_MAX_AGE_SECONDS,
  MAX_DPOP_PROOF_LEEWAY_SECONDS,
  MAX_DPOP_PROOF_MAX_AGE_SECONDS,
} from './dpop-proof.js'
import { createDpopNonces, type DpopNonceOptions, type DpopNonces } from './nonces.js'
import { type DpopReplayCache, MemoryDpopReplayCache } from './replay-cache.js'

/** Options of a policy's DPoP check: `createAccessPolicy({ dpop })`. */
export interface DpopPolicyOptions {
  /**
   * Where used proofs are remembered. Several instances must share one (`RedisDpopReplayCache`
   * from `data-access-policy/redis`), or a proof used on one is accepted once more on each other.
   */
  readonly replayCache?: DpopReplayCache
  /** The accepted proof algorithms, a subset of `DPOP_ALGORITHMS`; named in the `algs` of challenges. */
  readonly algorithms?: readonly string[]
  /** How long after its `iat` a proof is accepted, in seconds (1–3600, default 300). */
  readonly maxAgeSeconds?: number
  /** How far ahead of the clock a proof's `iat` may be, in seconds (0–300, default 30). */
  readonly leewaySeconds?: number
  /**
   * Server nonces (RFC 9449 §8): a proof must carry the current one, else 401 `use_dpop_nonce`
   * with `DPoP-Nonce`. Stateless: every instance given the same secret agrees. Default: off.
   */
  readonly nonces?: DpopNonceOptions
  /**
   * The URL clients reach this server's routes under: its origin (`https://data.example.org`), and
   * the path prefix a proxy strips before the request reaches the framework, if any
   * (`https://example.org/data`). Every proof's `htu` must be this followed by the request's path. A
   * function is asked on each DPoP request (a host that learns its address once it listens); an
   * answer that is no such URL refuses the proof. Default: the origin of `resource`; without either, the request's
   * scheme (after trusted proxies) and its `Host` header, which the client chooses.
   */
  readonly publicUrl?: string | (() => string)
}

const PUBLIC_URL_RULE =
  'must be an absolute http(s) URL without user info, query or fragment, e.g. "https://data.example.org"'

/**
 * `value` as the base a request's path is appended to (no trailing `/`), or undefined when it is
 * not an absolute http(s) URL without user info, query or fragment.
 */
function baseUrlOf(value: unknown): string | undefined {
  if (typeof value !== 'string' || !URL.canParse(value) || /[?#]/.test(value)) return undefined
  const url = new URL(value)
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username !== '' || url.password !== '')
    return undefined
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`
}

/** The schema of {@link DpopPolicyOptions}, with its defaults. Internal to the package. */
export const dpopOptionsSchema = z
  .strictObject({
    replayCache: z
      .custom<DpopReplayCache>(
        (value) =>
          typeof value === 'object' &&
          value !== null &&
          typeof (value as { claim?: unknown }).claim === 'function',
        { message: 'must be a DpopReplayCache (claim)' },
      )
      .optional(),
    algorithms: z
      .array(z.enum(DPOP_ALGORITHMS as [string, ...string[]]))
      .min(1)
      .optional(),
    maxAgeSeconds: z
      .number()
      .int()
      .min(1)
      .max(MAX_DPOP_PROOF_MAX_AGE_SECONDS)
      .default(DPOP_PROOF_MAX_AGE_SECONDS),
    leewaySeconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_DPOP_PROOF_LEEWAY_SECONDS)
      .default(DPOP_PROOF_LEEWAY_SECONDS),
    nonces: z
      .strictObject({
        secret: z.union([z.string(), z.instanceof(Uint8Array)]),
        windowSeconds: z.number().optional(),
      })
      .optional(),
    publicUrl: z
      .union([
        z.string().refine((value) => baseUrlOf(value) !== undefined, { message: PUBLIC_URL_RULE }),
        z.custom<() => string>((value) => typeof value === 'function'),
      ])
      .optional(),
  })
  .default({ maxAgeSeconds: DPOP_PROOF_MAX_AGE_SECONDS, leewaySeconds: DPOP_PROOF_LEEWAY_SECONDS })

/**
 * Compiles a policy's checked `dpop` option: its own replay cache unless the host shares one, and
 * the public origin of its `resource` unless it names one. Internal to the package.
 */
export function compileDpopCheck(
  options: z.infer<typeof dpopOptionsSchema>,
  resourceOf: () => string | undefined,
): DpopCheck {
  let nonces: DpopNonces | undefined
  if (options.nonces !== undefined) {
    try {
      nonces = createDpopNonces(options.nonces as DpopNonceOptions)
    } catch (error) {
      // createDpopNonces throws only ConfigErrors, named from its own options: named here in full.
      const { path, detail } = error as ConfigError
      throw new ConfigError(['options', 'dpop', 'nonces', ...path], detail, { cause: error })
    }
  }
  const publicUrl = options.publicUrl
  return {
    algorithms: options.algorithms ?? DPOP_ALGORITHMS,
    maxAgeSeconds: options.maxAgeSeconds,
    leewaySeconds: options.leewaySeconds,
    replayCache: options.replayCache ?? new MemoryDpopReplayCache(),
    nonces,
    base: baseOf(publicUrl, resourceOf),
  }
}

// What a request's path is appended to: the host's public URL, else its resource's origin; `null`
// when a function answers no usable URL (the proof is then refused, never checked against `Host`).
function baseOf(
  publicUrl: string | (() => string) | undefined,
  resourceOf: () => string | undefined,
): () => string | undefined | null {
  if (publicUrl === undefined) {
    return () => {
      const resource = resourceOf()
      return resource === undefined ? undefined : new URL(resource).origin
    }
  }
  if (typeof publicUrl === 'string') {
    const base = baseUrlOf(publicUrl)
    return () => base
  }
  return () => baseUrlOf(publicUrl()) ?? null
}
