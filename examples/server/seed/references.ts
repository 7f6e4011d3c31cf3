/**
 * The references between a seed's entries, checked once the shapes are right: users, owners and
 * handles exist and are unique, names are unique per owner, tables are consistent, token scopes are
 * known and token values are not reused.
 */
import { type ConfigPath, parseScopes, ScopeError } from 'data-access-policy'
import { quote } from './messages.js'
import type { SeedShape } from './shapes.js'

/** A problem found: where, and what is wrong. */
export interface Issue {
  readonly path: ConfigPath
  readonly detail: string
}

// The references between entries, checked in document order so the first problem in the file is
// the one reported.
export function crossCheck(seed: SeedShape): Issue | undefined {
  const users = new Set<string>()
  const owners = new Map<string, string>()
  for (const [i, user] of seed.users.entries()) {
    if (users.has(user.handle))
      return { path: ['users', i, 'handle'], detail: `${quote(user.handle)} is already a user` }
    users.add(user.handle)
    owners.set(user.handle, 'user')
  }
  const isUser = (handle: string) => users.has(handle)
  const notUser = (handle: string) => `${quote(handle)} is not a user of this seed`

  for (const [i, organization] of seed.organizations.entries()) {
    const taken = owners.get(organization.handle)
    if (taken !== undefined) {
      return {
        path: ['organizations', i, 'handle'],
        detail: `${quote(organization.handle)} is already a ${taken} handle`,
      }
    }
    owners.set(organization.handle, 'organization')
    for (const list of ['admins', 'members'] as const) {
      const seen = new Set<string>()
      for (const [j, handle] of (organization[list] ?? []).entries()) {
        if (!isUser(handle)) return { path: ['organizations', i, list, j], detail: notUser(handle) }
        if (seen.has(handle))
          return { path: ['organizations', i, list, j], detail: `${quote(handle)} is listed twice` }
        seen.add(handle)
      }
    }
  }

  for (const [kind, entries] of [
    ['datasets', seed.datasets],
    ['workflows', seed.workflows ?? []],
  ] as const) {
    const seen = new Map<string, number>()
    for (const [i, entry] of entries.entries()) {
      if (!owners.has(entry.owner)) {
        return {
          path: [kind, i, 'owner'],
          detail: `${quote(entry.owner)} is neither a user nor an organization`,
        }
      }
      const key = `${entry.owner}/${entry.name}`
      const first = seen.get(key)
      if (first !== undefined) {
        return {
          path: [kind, i, 'name'],
          detail: `${quote(entry.name)} is already used by ${kind}[${first}] of ${quote(entry.owner)}`,
        }
      }
      seen.set(key, i)
      for (const handle of Object.keys(entry.access ?? {})) {
        if (!isUser(handle)) return { path: [kind, i, 'access', handle], detail: notUser(handle) }
      }
    }
  }

  for (const [i, dataset] of seed.datasets.entries()) {
    const issue = checkTables(dataset.tables ?? [])
    if (issue !== undefined) return { path: ['datasets', i, 'tables', ...issue.path], detail: issue.detail }
  }

  const values = new Map<string, number>()
  for (const [i, token] of seed.tokens.entries()) {
    if (!isUser(token.user)) return { path: ['tokens', i, 'user'], detail: notUser(token.user) }
    for (const [j, scope] of token.scopes.entries()) {
      try {
        parseScopes([scope])
      } catch (error) {
        if (!(error instanceof ScopeError)) throw error
        return { path: ['tokens', i, 'scopes', j], detail: error.message }
      }
    }
    const first = values.get(token.value)
    // The value is a secret: name where it was first used instead of printing it again.
    if (first !== undefined)
      return { path: ['tokens', i, 'value'], detail: `is the same value as tokens[${first}].value` }
    values.set(token.value, i)
  }

  const clients = new Set<string>()
  for (const [i, client] of (seed.clients ?? []).entries()) {
    if (clients.has(client.id))
      return { path: ['clients', i, 'id'], detail: `${quote(client.id)} is already a client id` }
    clients.add(client.id)
    // A resource server's credential (introspect) signs nobody in, so it needs no redirect URI.
    if (client.redirectUris.length === 0 && client.introspect !== true)
      return { path: ['clients', i, 'redirectUris'], detail: 'must list at least one redirect URI' }
    // RFC 7662 §4: only a client that authenticates with a secret may introspect.
    if (client.introspect === true && client.secret === undefined)
      return {
        path: ['clients', i, 'introspect'],
        detail: 'needs a secret: only a confidential client may introspect',
      }
  }
  return checkResources(seed)
}

function checkResources(seed: SeedShape): Issue | undefined {
  const uris = new Set<string>()
  for (const [i, resource] of (seed.resources ?? []).entries()) {
    if (uris.has(resource.uri))
      return { path: ['resources', i, 'uri'], detail: `${quote(resource.uri)} is already a resource` }
    uris.add(resource.uri)
  }
  return undefined
}

function checkTables(tables: SeedShape['datasets'][number]['tables'] & {}): Issue | undefined {
  const names = new Set<string>()
  for (const [t, table] of tables.entries()) {
    if (names.has(table.name))
      return { path: [t, 'name'], detail: `${quote(table.name)} is already a table of this dataset` }
    names.add(table.name)
    const variables = new Set<string>()
    for (const [v, variable] of table.variables.entries()) {
      if (variables.has(variable.name)) {
        return {
          path: [t, 'variables', v, 'name'],
          detail: `${quote(variable.name)} is already a variable of this table`,
        }
      }
      variables.add(variable.name)
    }
    for (const [r, row] of table.rows.entries()) {
      if (row.length !== table.variables.length) {
        const count = table.variables.length
        return {
          path: [t, 'rows', r],
          detail: `${quote(row)} has ${row.length} value${row.length === 1 ? '' : 's'}; the table has ${count} variable${count === 1 ? '' : 's'}`,
        }
      }
    }
  }
  return undefined
}
