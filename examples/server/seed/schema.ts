/**
 * The seed file of the reference server (docs/seed-format.md): its shapes (seed/shapes.ts) are validated
 * first, then the cross-references between entries (seed/references.ts); the first problem is
 * reported as ONE line naming the field and quoting the bad value (seed/messages.ts), e.g.
 * `datasets[1].exportRestrictions.allowedIps[0]: "10.1.2.77/24" has host bits set; did you mean 10.1.2.0/24?`.
 */
import {
  ConfigError,
  type DatasetLevel,
  type ExportRestrictions,
  type PublicDatasetLevel,
  type PublicWorkflowLevel,
  parseScopes,
  type Scope,
  type WorkflowLevel,
} from 'data-access-policy'
import { shapeError } from './messages.js'
import { crossCheck } from './references.js'
import { seedShape } from './shapes.js'

/** A JSON scalar: what a table cell may hold. */
export type Cell = string | number | boolean | null

/** A seed as validated, before passwords and token values are hashed. */
export interface SeedSpec {
  readonly users: readonly { readonly handle: string; readonly password: string }[]
  readonly organizations: readonly {
    readonly handle: string
    readonly admins: readonly string[]
    readonly members: readonly string[]
  }[]
  readonly datasets: readonly SeedDataset[]
  readonly workflows: readonly SeedWorkflow[]
  readonly tokens: readonly SeedToken[]
  readonly clients: readonly SeedClient[]
  /** Resource servers, besides this server's API, that tokens may be issued for (RFC 8707). */
  readonly resources: readonly SeedResource[]
}

/** A resource server this server issues tokens for: its identifier and its name on consent pages. */
export interface SeedResource {
  /** The RFC 8707 resource identifier: an absolute http(s) URI without fragment. */
  readonly uri: string
  readonly name: string
}

export interface SeedDataset {
  readonly owner: string
  readonly name: string
  readonly description: string
  readonly publicLevel: PublicDatasetLevel
  readonly access: Readonly<Record<string, DatasetLevel>>
  readonly exportRestrictions: ExportRestrictions | undefined
  readonly tables: readonly SeedTable[]
}

export interface SeedTable {
  readonly name: string
  readonly variables: readonly { readonly name: string; readonly type: string }[]
  readonly rows: readonly (readonly Cell[])[]
}

export interface SeedWorkflow {
  readonly owner: string
  readonly name: string
  readonly publicLevel: PublicWorkflowLevel
  readonly access: Readonly<Record<string, WorkflowLevel>>
}

export interface SeedToken {
  readonly user: string
  readonly name: string
  readonly scopes: readonly Scope[]
  readonly value: string
  /** Epoch milliseconds; a past instant seeds an already expired token. */
  readonly expiresAt: number | undefined
  readonly revoked: boolean
}

export interface SeedClient {
  readonly id: string
  /** Absent for a public client. */
  readonly secret: string | undefined
  readonly redirectUris: readonly string[]
  readonly offline: boolean
  /** A resource server's credential: may call `POST /oauth/introspect` (needs a secret). */
  readonly introspect: boolean
  /** Its tokens are always DPoP-bound (RFC 9449): every token request needs a proof. */
  readonly dpopBound: boolean
}

/**
 * Validates a parsed seed file and returns it with every default applied.
 *
 * @throws {ConfigError} for the first problem, its message one line: `tokens[0].user: "eve" is not a user of this seed`.
 * @example
 * const seed = parseSeed(JSON.parse(readFileSync('seed.json', 'utf8')))
 */
export function parseSeed(input: unknown): SeedSpec {
  const parsed = seedShape.safeParse(input)
  if (!parsed.success) throw shapeError(parsed.error, input)
  const seed = parsed.data
  const issue = crossCheck(seed)
  if (issue !== undefined) throw new ConfigError(issue.path, issue.detail)
  return {
    users: seed.users,
    organizations: seed.organizations.map((organization) => ({
      ...organization,
      members: organization.members ?? [],
    })),
    datasets: seed.datasets.map((dataset) => ({
      owner: dataset.owner,
      name: dataset.name,
      description: dataset.description ?? '',
      publicLevel: dataset.publicLevel,
      access: dataset.access ?? {},
      exportRestrictions: dataset.exportRestrictions,
      tables: dataset.tables ?? [],
    })),
    workflows: (seed.workflows ?? []).map((workflow) => ({ ...workflow, access: workflow.access ?? {} })),
    tokens: seed.tokens.map((token) => ({
      user: token.user,
      name: token.name,
      scopes: parseScopes(token.scopes).granted,
      value: token.value,
      expiresAt: token.expiresAt === undefined ? undefined : Date.parse(token.expiresAt),
      revoked: token.revoked ?? false,
    })),
    clients: (seed.clients ?? []).map((client) => ({
      id: client.id,
      secret: client.secret,
      redirectUris: client.redirectUris,
      offline: client.offline ?? false,
      introspect: client.introspect ?? false,
      dpopBound: client.dpopBound ?? false,
    })),
    resources: seed.resources ?? [],
  }
}
