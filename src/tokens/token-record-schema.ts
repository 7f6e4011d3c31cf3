/** The schema that reads a stored token record back: every field's shape and the rules across fields. */
import { z } from 'zod'
import { SCOPES } from '../decisions/scopes.js'
import { parseAddressRule } from '../restrictions/ip-address.js'
import { isResourceIdentifier, MAX_AUDIENCE_SIZE, RESOURCE_IDENTIFIER_RULE } from './audience.js'
import {
  CLIENT_ID_PATTERN,
  describeBadReason,
  describeBadStoredName,
  HASH_PATTERN,
  HINT_PATTERN,
  isCanonicalScopeList,
  JWK_THUMBPRINT_PATTERN,
  MAX_USER_ID_LENGTH,
  TOKEN_ID_PATTERN,
  type TokenRecord,
} from './token-fields.js'
import { TOKEN_PREFIXES } from './token-format.js'
import { MAX_TOKEN_LIFETIME_DAYS } from './token-lifetime.js'

const epochMsSchema = z.int().nonnegative()

/**
 * Validates a stored token record: exact field shapes, canonical scopes, unknown keys rejected.
 *
 * @example
 * const record = tokenRecordSchema.parse(JSON.parse(stored))
 */
export const tokenRecordSchema: z.ZodType<TokenRecord> = z
  .strictObject({
    id: z.string().regex(TOKEN_ID_PATTERN),
    kind: z.enum(['api', 'oauth']),
    userId: z.string().min(1).max(MAX_USER_ID_LENGTH),
    name: z.string().superRefine((name, ctx) => {
      const problem = describeBadStoredName(name)
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem })
    }),
    scopes: z
      .array(z.enum(SCOPES))
      .readonly()
      .refine(isCanonicalScopeList, 'must start with "public" and follow contract order without duplicates'),
    hash: z.string().regex(HASH_PATTERN, 'must be a SHA-256 in lower-case hex'),
    hint: z.string().regex(HINT_PATTERN, 'must be a prefix, "…" and four base62 characters'),
    createdAt: epochMsSchema,
    expiresAt: epochMsSchema.exactOptional(),
    revokedAt: epochMsSchema.exactOptional(),
    revokedReason: z
      .string()
      .superRefine((reason, ctx) => {
        const problem = describeBadReason(reason)
        if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem })
      })
      .exactOptional(),
    lastUsedAt: epochMsSchema.exactOptional(),
    lastUsedFrom: z
      .string()
      .max(64)
      .refine((network) => parseAddressRule(network).ok, 'must be an IPv4 address or an IPv6 network')
      .exactOptional(),
    clientId: z.string().regex(CLIENT_ID_PATTERN).exactOptional(),
    audience: z
      .array(z.string().refine(isResourceIdentifier, RESOURCE_IDENTIFIER_RULE))
      .min(1)
      .max(MAX_AUDIENCE_SIZE)
      .readonly()
      .exactOptional(),
    dpopJkt: z
      .string()
      .regex(JWK_THUMBPRINT_PATTERN, 'must be a JWK SHA-256 thumbprint: 43 base64url characters')
      .exactOptional(),
    lifetimeDays: z.int().min(1).max(MAX_TOKEN_LIFETIME_DAYS).exactOptional(),
    rotatedAt: epochMsSchema.exactOptional(),
    previousHash: z.string().regex(HASH_PATTERN, 'must be a SHA-256 in lower-case hex').exactOptional(),
    previousHashExpiresAt: epochMsSchema.exactOptional(),
  })
  .superRefine((record, ctx) => {
    if (!record.hint.startsWith(TOKEN_PREFIXES[record.kind])) {
      ctx.addIssue({
        code: 'custom',
        path: ['hint'],
        message: `must start with ${TOKEN_PREFIXES[record.kind]}`,
      })
    }
    if (record.clientId !== undefined && record.kind !== 'oauth') {
      ctx.addIssue({ code: 'custom', path: ['clientId'], message: 'only OAuth tokens have a client id' })
    }
    if (record.dpopJkt !== undefined && record.kind !== 'oauth') {
      ctx.addIssue({ code: 'custom', path: ['dpopJkt'], message: 'only OAuth tokens are bound to a key' })
    }
    if (record.audience !== undefined && record.kind !== 'oauth') {
      ctx.addIssue({ code: 'custom', path: ['audience'], message: 'only OAuth tokens have an audience' })
    }
    if ((record.previousHash === undefined) !== (record.previousHashExpiresAt === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['previousHashExpiresAt'],
        message: 'previousHash and previousHashExpiresAt come together',
      })
    }
    if (record.previousHash !== undefined && record.previousHash === record.hash) {
      ctx.addIssue({ code: 'custom', path: ['previousHash'], message: 'must differ from hash' })
    }
    if (record.revokedReason !== undefined && record.revokedAt === undefined) {
      ctx.addIssue({ code: 'custom', path: ['revokedReason'], message: 'only a revoked token has a reason' })
    }
    if (record.kind !== 'api') {
      for (const field of ['lifetimeDays', 'rotatedAt', 'previousHash'] as const) {
        if (record[field] !== undefined) {
          ctx.addIssue({ code: 'custom', path: [field], message: 'only API tokens have it' })
        }
      }
    }
  })
  .readonly()
