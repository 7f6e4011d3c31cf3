import type { DecisionTableRow, DecisionTables } from '../src/decisions/decision-tables.js'
import { OPERATIONS, type Operation } from '../src/decisions/operations.js'

const KIND_TITLES = { dataset: 'Datasets', workflow: 'Workflows', organization: 'Organizations' } as const

function cell(row: DecisionTableRow): string {
  if (row.code === 'allow') return '✅ allow'
  return row.requiredScope === undefined
    ? `${row.status} \`${row.code}\``
    : `${row.status} \`${row.code}\` (needs \`${row.requiredScope}\`)`
}

// Operations with the same need always decide alike; group them into one column, and check it.
function columnsOf(rows: readonly DecisionTableRow[]): Operation[][] {
  const groups = new Map<string, Operation[]>()
  for (const row of rows) {
    const key = JSON.stringify(OPERATIONS[row.operation].need)
    const group = groups.get(key) ?? []
    if (!group.includes(row.operation)) group.push(row.operation)
    groups.set(key, group)
  }
  return [...groups.values()]
}

function tableFor(rows: readonly DecisionTableRow[], kind: DecisionTableRow['resource']): string[] {
  const columns = columnsOf(rows)
  const orgs = kind === 'organization'
  const header = orgs ? ['the user'] : ['public level', 'user level']
  const lines = [
    `| ${[...header, ...columns.map((group) => group.map((op) => `\`${op}\``).join('<br>'))].join(' | ')} |`,
    `|${[...header, ...columns].map(() => ' --- ').join('|')}|`,
  ]
  const byCase = new Map<string, DecisionTableRow[]>()
  for (const row of rows) {
    const key = `${row.publicLevel}|${row.userLevel}`
    byCase.set(key, [...(byCase.get(key) ?? []), row])
  }
  for (const caseRows of byCase.values()) {
    const first = caseRows[0]!
    const cells = columns.map((group) => {
      const outcomes = new Set(caseRows.filter((row) => group.includes(row.operation)).map(cell))
      if (outcomes.size !== 1) throw new Error(`operations ${group.join(', ')} decide differently`)
      return [...outcomes][0]
    })
    const labels = orgs ? [first.userLevel] : [`\`${first.publicLevel}\``, `\`${first.userLevel}\``]
    lines.push(`| ${[...labels, ...cells].join(' | ')} |`)
  }
  return lines
}

/**
 * Renders the tables as Markdown: one section per resource kind, one table per token scope,
 * so "what does a token with `data.metadata` get on a hidden dataset?" is one lookup.
 */
export function renderDecisionTablesMarkdown(tables: DecisionTables): string {
  const out = [
    '# Decision tables',
    '',
    '<!-- Generated from the core by `npm run tables`; do not edit. `npm test` fails when it is stale. -->',
    '',
    'Every answer the policy gives, enumerated from the core itself (`decide`). Find the resource kind,',
    "then the token's scope in that family (scopes imply the narrower ones of their family, and nothing",
    "in another family), then the row for the resource's public level and the user's own level.",
    '',
    '- **public level**: what a logged-out caller may do (`none` hides the resource from the public).',
    "- **user level**: what the token's owner may do, scopes aside (`none` for a stranger).",
    '- `404 not_found`: the caller may not learn that the resource exists.',
    '- `403 insufficient_scope (needs …)`: the user could, with a token carrying that scope.',
    "- `403 insufficient_access`: the user's own access falls short; no scope would help.",
    '',
    'Authentication outcomes (400/401/503) come before these and are listed in',
    '[authentication.md](authentication.md). Every 403 body says `Not authorized`.',
    '',
  ]
  for (const kind of ['dataset', 'workflow', 'organization'] as const) {
    out.push(`## ${KIND_TITLES[kind]}`, '')
    const rows = tables.decisions.filter((row) => row.resource === kind)
    const scopes = [...new Set(rows.map((row) => row.scope))]
    for (const scope of scopes) {
      out.push(
        `### Token with \`${scope}\``,
        '',
        ...tableFor(
          rows.filter((row) => row.scope === scope),
          kind,
        ),
        '',
      )
    }
  }
  out.push(
    '## Export restrictions',
    '',
    'Evaluated only for data-content operations (`table.read`, `query.run`, `export.create`), after the',
    'checks above allowed them, for a user with `data` access and a `data.data` token. Per request,',
    'never cumulative.',
    '',
    '| restriction | operation | request | outcome |',
    '| --- | --- | --- | --- |',
    ...tables.exports.map(
      (row) =>
        `| \`${row.restriction}\` | \`${row.operation}\` | ${row.request} | ${row.code === 'allow' ? '✅ allow' : `${row.status} \`${row.code}\``} |`,
    ),
    '',
  )
  return out.join('\n')
}

/** Renders the tables as JSON (stable key order, two-space indent, trailing newline). */
export function renderDecisionTablesJson(tables: DecisionTables): string {
  return `${JSON.stringify(tables, null, 2)}\n`
}

/** Renders the decision rows as CSV (RFC 4180), one row per enumerated case. */
export function renderDecisionTablesCsv(tables: DecisionTables): string {
  const header = 'resource,scope,public_level,user_level,operation,status,code,required_scope'
  const lines = tables.decisions.map((row) =>
    [
      row.resource,
      row.scope,
      row.publicLevel,
      row.userLevel,
      row.operation,
      row.status,
      row.code,
      row.requiredScope ?? '',
    ].join(','),
  )
  return `${[header, ...lines].join('\r\n')}\r\n`
}
