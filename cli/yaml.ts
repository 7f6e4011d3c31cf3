// YAML for the JSON data the command prints: block mappings and sequences, every string a JSON
// string (a JSON string is a valid YAML double-quoted scalar), so no value can be read back as
// another type. Only what JSON.stringify would write: no anchors, tags or multi-line scalars.

// A key that YAML reads as the same string when unquoted: no indicator first, nothing that
// resolves to a number, a boolean or null.
const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_.-]*$/
const RESERVED = /^(?:true|false|null|yes|no|on|off|y|n|~)$/i

function key(name: string): string {
  return PLAIN_KEY.test(name) && !RESERVED.test(name) ? name : JSON.stringify(name)
}

function scalar(value: unknown): string {
  if (value === null) return 'null'
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`cannot write ${value} as YAML`)
    return String(value)
  }
  if (typeof value === 'boolean') return String(value)
  throw new TypeError(`cannot write a ${typeof value} as YAML`)
}

function isCollection(value: unknown): value is object {
  return typeof value === 'object' && value !== null
}

function isEmpty(value: object): boolean {
  return Array.isArray(value) ? value.length === 0 : Object.keys(value).length === 0
}

function lines(value: unknown, indent: string): string[] {
  if (!isCollection(value) || isEmpty(value)) return [`${indent}${inline(value)}`]
  const out: string[] = []
  if (Array.isArray(value)) {
    for (const item of value) {
      if (isCollection(item) && !isEmpty(item)) {
        // The first line of a nested block shares the dash's line.
        const nested = lines(item, `${indent}  `)
        out.push(`${indent}- ${nested[0]!.slice(indent.length + 2)}`, ...nested.slice(1))
      } else {
        out.push(`${indent}- ${inline(item)}`)
      }
    }
    return out
  }
  for (const [name, item] of Object.entries(value)) {
    if (item === undefined) continue
    if (isCollection(item) && !isEmpty(item)) {
      out.push(`${indent}${key(name)}:`, ...lines(item, Array.isArray(item) ? indent : `${indent}  `))
    } else {
      out.push(`${indent}${key(name)}: ${inline(item)}`)
    }
  }
  return out
}

function inline(value: unknown): string {
  if (isCollection(value)) return Array.isArray(value) ? '[]' : '{}'
  return scalar(value)
}

/**
 * Writes JSON-compatible data as a YAML 1.2 document that parses back to equal data.
 *
 * @example
 * toYaml({ security: [{ bearer: ['data.data'] }] })
 * // 'security:\n- bearer:\n  - "data.data"\n'
 */
export function toYaml(value: unknown): string {
  return `${lines(JSON.parse(JSON.stringify(value)) as unknown, '').join('\n')}\n`
}
