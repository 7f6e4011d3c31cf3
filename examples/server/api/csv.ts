/**
 * Tables as CSV (RFC 4180): a header line of variable names, then one line per row, CRLF line ends.
 */
import type { Cell, SeedTable } from '../seed/schema.js'

function field(value: Cell | string): string {
  if (value === null) return ''
  const text = String(value)
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/**
 * Renders a whole table as CSV.
 *
 * @see https://www.rfc-editor.org/rfc/rfc4180#section-2
 * @example
 * tableToCsv({ name: 't', variables: [{ name: 'id', type: 'integer' }], rows: [[1], [2]] }) // 'id\r\n1\r\n2\r\n'
 */
export function tableToCsv(table: SeedTable): string {
  const lines = [
    table.variables.map((variable) => field(variable.name)),
    ...table.rows.map((row) => row.map(field)),
  ]
  return lines.map((line) => `${line.join(',')}\r\n`).join('')
}
