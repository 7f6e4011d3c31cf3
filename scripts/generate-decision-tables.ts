// Writes docs/decision-tables.md and docs/decision-tables.json from the core.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { renderDecisionTablesJson, renderDecisionTablesMarkdown } from '../cli/decision-tables-render.js'
import { buildDecisionTables } from '../src/decisions/decision-tables.js'

const docs = join(import.meta.dirname, '..', 'docs')
const tables = buildDecisionTables()
writeFileSync(join(docs, 'decision-tables.md'), renderDecisionTablesMarkdown(tables))
writeFileSync(join(docs, 'decision-tables.json'), renderDecisionTablesJson(tables))
console.log(
  `wrote docs/decision-tables.md and docs/decision-tables.json (${tables.decisions.length} decisions)`,
)
