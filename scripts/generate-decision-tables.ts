// Writes docs/decision-tables.md and docs/decision-tables.json from the core.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildDecisionTables } from '../src/decision-tables.js'
import { renderDecisionTablesJson, renderDecisionTablesMarkdown } from '../src/decision-tables-render.js'

const docs = join(import.meta.dirname, '..', 'docs')
const tables = buildDecisionTables()
writeFileSync(join(docs, 'decision-tables.md'), renderDecisionTablesMarkdown(tables))
writeFileSync(join(docs, 'decision-tables.json'), renderDecisionTablesJson(tables))
console.log(
  `wrote docs/decision-tables.md and docs/decision-tables.json (${tables.decisions.length} decisions)`,
)
