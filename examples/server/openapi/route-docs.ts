/**
 * What the routes of the server answer beside the policy's denials, for its OpenAPI description:
 * each API route's success, query parameters and body, and the server's own errors (400
 * `invalid_parameter`, 413 `body_too_large`), each in the shape http-result.ts sends; the OAuth
 * routes' summaries and client authentication; the leak report endpoint. The policy's part
 * (security, 401/403/404/503) stays with `data-access-policy/openapi`; this is only what the
 * server's handlers add, and test/server/openapi.test.ts compares it with real answers.
 */
import { PUBLIC_DATASET_LEVELS } from 'data-access-policy'
import { API_PREFIX } from '../api/api-routes.js'
import { MEMBER_STATUSES } from '../api/data.js'
import { DEFAULT_MAX_RESULTS, MAX_MAX_RESULTS } from '../api/listing.js'
import {
  KEY_ID_HEADER,
  MAX_LEAK_REPORT_BYTES,
  MAX_REPORTED,
  SIGNATURE_HEADER,
} from '../leaks/leak-reports.js'
import { AUTHORIZATION_SERVER, PROTECTED_RESOURCE } from '../oauth/discovery.js'
import { LARGE_BODY_DEADLINE_MS, LARGE_BODY_PACE, MAX_CONCURRENT_LARGE_BODIES } from '../request/body.js'
import { MAX_BODY_BYTES } from '../routes/route-set.js'
import { MAX_TEXT_LENGTH } from '../seed/shapes.js'

/** A JSON Schema as the document carries it (arrays and nulls included, which 3.1 has). */
export type Schema = Readonly<Record<string, unknown>>

/** An OpenAPI Parameter Object in the query string or a header. */
export interface ParameterDoc {
  readonly name: string
  readonly in: 'query' | 'header'
  readonly required: boolean
  readonly description: string
  readonly schema: Schema
}

/** An OpenAPI Response Object. */
export interface ResponseDoc {
  readonly description: string
  readonly headers?: Readonly<Record<string, { readonly description: string; readonly schema: Schema }>>
  readonly content?: Readonly<Record<string, { readonly schema: Schema }>>
}

/** An OpenAPI Request Body Object. */
export interface RequestBodyDoc {
  readonly required: boolean
  readonly description: string
  readonly content: Readonly<Record<string, { readonly schema: Schema }>>
}

/** What the description says of one route beyond the policy's part. */
export interface RouteDoc {
  readonly summary?: string
  readonly description?: string
  readonly parameters?: readonly ParameterDoc[]
  readonly requestBody?: RequestBodyDoc
  /** By status; merged over the policy's (the 400 of a route that reads input is both). */
  readonly responses: Readonly<Record<string, ResponseDoc>>
  /** True when the route reads a query parameter or a body it can refuse (400 `invalid_parameter`). */
  readonly readsInput?: boolean
}

const JSON_TYPE = 'application/json'

/** The body of the server's own errors: the policy's shape plus a `detail` (routes/http-result.ts). */
export function serverErrorBody(status: number, message: string, codes: readonly string[]): Schema {
  return {
    type: 'object',
    required: ['error'],
    additionalProperties: false,
    properties: {
      error: {
        type: 'object',
        required: ['status', 'message', 'code', 'detail'],
        additionalProperties: false,
        properties: {
          status: { type: 'integer', enum: [status] },
          message: { type: 'string', enum: [message] },
          code: { type: 'string', enum: [...codes] },
          detail: { type: 'string', description: 'What was expected, never the value sent.' },
        },
      },
    },
  }
}

const jsonResponse = (description: string, schema: Schema): ResponseDoc => ({
  description,
  content: { [JSON_TYPE]: { schema } },
})

/** 413 on every API route: a JSON or form body past the cap, read or not (http/run-route.ts). */
export const BODY_TOO_LARGE: ResponseDoc = jsonResponse(
  `Payload too large: a JSON or form body of more than ${MAX_BODY_BYTES} bytes (\`body_too_large\`).`,
  serverErrorBody(413, 'Payload too large', ['body_too_large']),
)

const object = (properties: Record<string, Schema>): Schema => ({
  type: 'object',
  required: Object.keys(properties),
  additionalProperties: false,
  properties,
})
const string: Schema = { type: 'string' }
const integer: Schema = { type: 'integer' }

const MAX_RESULTS: ParameterDoc = {
  name: 'maxResults',
  in: 'query',
  required: false,
  description: `Results per page, ${DEFAULT_MAX_RESULTS} by default.`,
  schema: { type: 'integer', minimum: 1, maximum: MAX_MAX_RESULTS, default: DEFAULT_MAX_RESULTS },
}
const PAGE_TOKEN: ParameterDoc = {
  name: 'pageToken',
  in: 'query',
  required: false,
  description: "The previous page's `nextPageToken`; empty or absent: the first page.",
  schema: string,
}

const OVERVIEW = object({ owner: string, name: string, description: string })
const LISTING: RouteDoc = {
  description:
    'The datasets the caller may see, by name. `maxResults` and `pageToken` come from the query or ' +
    'from a JSON body, not both; an unknown owner is 404.',
  parameters: [MAX_RESULTS, PAGE_TOKEN],
  requestBody: {
    required: false,
    description: 'The listing parameters as JSON instead of the query (the contract sends it with its GET).',
    content: {
      [JSON_TYPE]: {
        schema: {
          type: 'object',
          additionalProperties: false,
          properties: {
            maxResults: MAX_RESULTS.schema,
            pageToken: string,
          },
        },
      },
    },
  },
  responses: {
    200: jsonResponse(
      'A page of datasets.',
      object({
        results: {
          type: 'array',
          items: object({
            owner: string,
            name: string,
            description: string,
            publicLevel: { type: 'string', enum: [...PUBLIC_DATASET_LEVELS] },
          }),
        },
        nextPageToken: { type: ['string', 'null'], description: '`null` on the last page.' },
      }),
    ),
  },
  readsInput: true,
}

const oneField = (name: string, schema: Schema, description: string): RequestBodyDoc => ({
  required: true,
  description,
  content: { [JSON_TYPE]: { schema: object({ [name]: schema }) } },
})

/** The API routes, by `METHOD path` as the route set has them. */
export const API_ROUTE_DOCS: Readonly<Record<string, RouteDoc>> = {
  [`GET ${API_PREFIX}/organizations/:org/datasets`]: LISTING,
  [`GET ${API_PREFIX}/users/:user/datasets`]: LISTING,
  [`GET ${API_PREFIX}/datasets/:owner/:name`]: {
    description: "The dataset's overview.",
    responses: { 200: jsonResponse("The dataset's overview.", OVERVIEW) },
  },
  [`PATCH ${API_PREFIX}/datasets/:owner/:name`]: {
    description: "Replaces the dataset's description.",
    requestBody: oneField(
      'description',
      { type: 'string', maxLength: MAX_TEXT_LENGTH },
      'The new description, and nothing else.',
    ),
    responses: { 200: jsonResponse("The dataset's overview, updated.", OVERVIEW) },
    readsInput: true,
  },
  [`GET ${API_PREFIX}/datasets/:owner/:name/metadata`]: {
    description: "The dataset's tables: their variables and row counts, no rows.",
    responses: {
      200: jsonResponse(
        "The dataset's tables.",
        object({
          tables: {
            type: 'array',
            items: object({
              name: string,
              variables: { type: 'array', items: object({ name: string, type: string }) },
              numRows: integer,
            }),
          },
        }),
      ),
    },
  },
  [`GET ${API_PREFIX}/datasets/:owner/:name/tables/:table/rows`]: {
    description:
      'The first rows of a table (data content: export restrictions apply); an unknown table is 404.',
    parameters: [{ ...MAX_RESULTS, description: `Rows to send, ${DEFAULT_MAX_RESULTS} by default.` }],
    responses: {
      200: jsonResponse(
        'The rows, each an array of cells.',
        object({ rows: { type: 'array', items: { type: 'array', items: {} } } }),
      ),
    },
    readsInput: true,
  },
  [`POST ${API_PREFIX}/datasets/:owner/:name/exports`]: {
    description: 'A table as CSV (data content: export restrictions apply); an unknown table is 404.',
    requestBody: oneField('table', string, 'The table to export, and nothing else.'),
    responses: {
      200: {
        description: 'The table as CSV, a header line first.',
        content: { 'text/csv': { schema: string } },
      },
    },
    readsInput: true,
  },
  [`POST ${API_PREFIX}/datasets/:owner/:name/versions`]: {
    description: 'Releases the next version of the dataset.',
    responses: { 201: jsonResponse('The version released.', object({ version: integer })) },
  },
  [`GET ${API_PREFIX}/workflows/:owner/:name`]: {
    description: 'The workflow.',
    responses: { 200: jsonResponse('The workflow.', object({ owner: string, name: string })) },
  },
  [`POST ${API_PREFIX}/workflows/:owner/:name/runs`]: {
    description: 'Queues a run of the workflow.',
    responses: {
      202: jsonResponse(
        'The run, queued.',
        object({ run: object({ id: string, status: { type: 'string', enum: ['queued'] } }) }),
      ),
    },
  },
  [`GET ${API_PREFIX}/organizations/:org`]: {
    description: "The organization's admins and members.",
    responses: {
      200: jsonResponse(
        'The organization.',
        object({
          handle: string,
          admins: { type: 'array', items: string },
          members: {
            type: 'array',
            items: object({ user: string, status: { type: 'string', enum: [...MEMBER_STATUSES] } }),
          },
        }),
      ),
    },
  },
  [`PATCH ${API_PREFIX}/organizations/:org/members/:user`]: {
    description: "Sets a member's status; a user who is not a member is 404.",
    requestBody: oneField(
      'status',
      { type: 'string', enum: [...MEMBER_STATUSES] },
      'The new status, and nothing else.',
    ),
    responses: {
      200: jsonResponse(
        "The member's new status.",
        object({ user: string, status: { type: 'string', enum: [...MEMBER_STATUSES] } }),
      ),
    },
    readsInput: true,
  },
}

/** The name of the client authentication scheme in `components.securitySchemes`. */
export const CLIENT_SCHEME = 'clientSecretBasic'

/** HTTP Basic with the client's id and secret: `client_secret_basic` (RFC 6749 §2.3.1). */
export const CLIENT_SECURITY_SCHEME = {
  type: 'http',
  scheme: 'basic',
  description:
    "A confidential client's `client_id` and `client_secret` (`client_secret_basic`). They may come " +
    'as `client_id` and `client_secret` in the form or JSON body instead (`client_secret_post`), never both.',
} as const

const CLIENT_POST_NOTE =
  'A confidential client authenticates with HTTP Basic (`client_secret_basic`) or with `client_id` ' +
  'and `client_secret` in the body (`client_secret_post`); a wrong or missing secret is 401 `invalid_client`.'
// No credentials is an alternative too: a public client names itself with `client_id` alone, and
// `client_secret_post`'s credentials are in the body, which no security scheme can say.
const CLIENT_OR_PUBLIC = [{ [CLIENT_SCHEME]: [] }, {}]

/** What the OAuth routes are, and the client authentication of the JSON endpoints. */
export interface OAuthRouteDoc {
  readonly summary: string
  readonly description?: string
  readonly security?: readonly Record<string, readonly string[]>[]
}

const DISCOVERY_AS = `/.well-known/${AUTHORIZATION_SERVER}`
const DISCOVERY_RESOURCE = `/.well-known/${PROTECTED_RESOURCE}`

/**
 * The documentation of an OAuth route, by method and path (discovery paths with their prefix), or
 * undefined for a route this table does not know: the test fails on one.
 */
export function oauthRouteDoc(method: string, path: string): OAuthRouteDoc | undefined {
  const key = `${method} ${path}`
  const fixed = OAUTH_ROUTE_DOCS[key]
  if (fixed !== undefined) return fixed
  if (method !== 'GET') return undefined
  if (path.startsWith(DISCOVERY_AS)) {
    return { summary: 'Authorization server metadata (RFC 8414)' }
  }
  if (path.startsWith(DISCOVERY_RESOURCE)) {
    return path.endsWith(API_PREFIX)
      ? { summary: "The API's protected resource metadata (RFC 9728)" }
      : { summary: "The server's protected resource metadata (RFC 9728)" }
  }
  return undefined
}

const OAUTH_ROUTE_DOCS: Readonly<Record<string, OAuthRouteDoc>> = {
  'GET /oauth/authorize': {
    summary: 'Authorization endpoint: the standard flow (PKCE with S256 required)',
    description: 'An HTML page: sign-in, then the consent page.',
  },
  'POST /oauth/consent': {
    summary: 'The consent answer (approve or deny), for both flows',
    description: 'A form of the consent page, with its session; not for API clients.',
  },
  'GET /device': {
    summary: 'Device verification page: enter the user code',
    description: 'An HTML page, opened from the `verification_uri` of a device grant.',
  },
  'POST /device': {
    summary: 'Device verification: the user code, then sign-in and consent',
    description: 'A form of the verification page; not for API clients.',
  },
  'POST /oauth/device_authorization': {
    summary: 'Device authorization endpoint: the device flow (PKCE with S256 required)',
    description: CLIENT_POST_NOTE,
    security: CLIENT_OR_PUBLIC,
  },
  'POST /oauth/token': {
    summary: 'Token endpoint: authorization codes, device codes and refresh tokens',
    description: CLIENT_POST_NOTE,
    security: CLIENT_OR_PUBLIC,
  },
  'POST /oauth/revoke': {
    summary: 'Revocation endpoint: a client revokes a token it was issued (RFC 7009)',
    description: CLIENT_POST_NOTE,
    security: CLIENT_OR_PUBLIC,
  },
  'POST /oauth/introspect': {
    summary: 'Introspection endpoint: whether a token is active (RFC 7662)',
    description:
      'For registered confidential clients the operator allowed to introspect. ' +
      `${CLIENT_POST_NOTE} A public client is 401 \`invalid_client\` too.`,
    // `client_secret_post` is the other way in, in the body: no scheme says it (see the description).
    security: [{ [CLIENT_SCHEME]: [] }],
  },
  'POST /oauth/register': {
    summary: 'Dynamic client registration: a public client registers itself (RFC 7591)',
    description:
      'A JSON body of client metadata: `redirect_uris` (loopback or https), optional `client_name`, ' +
      '`scope`, `grant_types`, `response_types` and `token_endpoint_auth_method` (`none` only). ' +
      'Answers 201 with a `client_id` and no secret; such a client never gets a refresh token. ' +
      'Limited per network (429 with `Retry-After`).',
  },
}

/** `POST /secret-scanning/report`, served with `--secret-scanning-keys`. */
export const LEAK_REPORT_DOC: RouteDoc & { readonly summary: string } = {
  summary: 'Leak reports (GitHub secret scanning): revoke the tokens found public',
  description:
    'A JSON array of `{ token, type, url, source }` in the GitHub secret-scanning partner format, ' +
    'signed with ECDSA P-256 / SHA-256 over the raw body by a key of `--secret-scanning-keys`. ' +
    'Every reported value of a live token is revoked. Takes no bearer token: the signature authenticates.',
  parameters: [
    {
      name: KEY_ID_HEADER,
      in: 'header',
      required: true,
      description: 'The identifier of the key that signed the body.',
      schema: string,
    },
    {
      name: SIGNATURE_HEADER,
      in: 'header',
      required: true,
      description: 'The base64 DER ECDSA signature of the raw body.',
      schema: string,
    },
  ],
  requestBody: {
    required: true,
    description: `The reported tokens (1 to ${MAX_REPORTED}), at most ${MAX_LEAK_REPORT_BYTES} bytes.`,
    content: {
      [JSON_TYPE]: {
        schema: {
          type: 'array',
          minItems: 1,
          maxItems: MAX_REPORTED,
          items: {
            type: 'object',
            required: ['token', 'type', 'url', 'source'],
            properties: { token: string, type: string, url: string, source: string },
          },
        },
      },
    },
  },
  responses: {
    200: jsonResponse('Feedback on each reported token, in order; never a token value.', {
      type: 'array',
      items: object({
        token_hash: { type: 'string', description: 'The SHA-256 of the reported value, hex.' },
        token_type: string,
        label: { type: 'string', enum: ['true_positive', 'false_positive'] },
      }),
    }),
    400: jsonResponse(
      'Bad request: the body is not a report (`malformed_report`).',
      serverErrorBody(400, 'Bad request', ['malformed_report']),
    ),
    401: jsonResponse(
      'Unauthorized: no signature, an unknown key or a signature that does not verify ' +
        `(\`invalid_signature\`); a body past ${MAX_BODY_BYTES} bytes is refused as soon as it passes them ` +
        'unless the headers name a configured key and carry a signature that parses.',
      serverErrorBody(401, 'Unauthorized', ['invalid_signature']),
    ),
    409: jsonResponse(
      'Conflict: the same report was received within a day (`replayed_report`).',
      serverErrorBody(409, 'Conflict', ['replayed_report']),
    ),
    408: jsonResponse(
      `Request timeout: a body past ${MAX_BODY_BYTES} bytes fell behind ` +
        `${LARGE_BODY_PACE.bytesPerSecond / 1024} KiB/s averaged after a ${LARGE_BODY_PACE.graceMs / 1000}-second ` +
        `grace (the whole body is due by then plus its Content-Length at that rate, within ` +
        `${LARGE_BODY_DEADLINE_MS / 1000} seconds); the connection is closed, so a sender still there ` +
        'may read this or only see the connection end (`body_read_timeout`).',
      serverErrorBody(408, 'Request timeout', ['body_read_timeout']),
    ),
    411: jsonResponse(
      `Length required: a body past ${MAX_BODY_BYTES} bytes without a Content-Length (a chunked body) ` +
        'is not read on (`length_required`).',
      serverErrorBody(411, 'Length required', ['length_required']),
    ),
    // The route's own cap, not the API's MAX_BODY_BYTES of BODY_TOO_LARGE.
    413: jsonResponse(
      `Payload too large: a body of more than ${MAX_LEAK_REPORT_BYTES} bytes (\`body_too_large\`).`,
      serverErrorBody(413, 'Payload too large', ['body_too_large']),
    ),
    503: {
      ...jsonResponse(
        'Service unavailable: a store failed, or ' +
          `${MAX_CONCURRENT_LARGE_BODIES} other bodies past ${MAX_BODY_BYTES} bytes are being read, ` +
          'or one from the same network (or IPv6 /48) is; ' +
          'the report was not kept, send it again (`service_unavailable`).',
        serverErrorBody(503, 'Service unavailable', ['service_unavailable']),
      ),
      headers: {
        'Retry-After': {
          description: 'Seconds to wait before sending again; sent when the body readers are busy.',
          schema: integer,
        },
      },
    },
  },
}
