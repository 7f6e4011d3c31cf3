/**
 * The public keys that sign leak reports (`--secret-scanning-keys FILE`), in the shape GitHub
 * publishes them at https://api.github.com/meta/public_keys/secret_scanning:
 *
 * ```json
 * { "public_keys": [ { "key_identifier": "bcb5…518c", "key": "-----BEGIN PUBLIC KEY-----\n…", "is_current": true } ] }
 * ```
 *
 * Every key must be an ECDSA P-256 public key in PEM (SPKI); identifiers are unique. A bad file is
 * a ConfigError naming the flag (exit code 2), found at start rather than at the first report.
 */
import { createPublicKey, type KeyObject } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { ConfigError } from 'data-access-policy'
import { quote } from '../seed/messages.js'

/** The verification keys by their identifier (`Github-Public-Key-Identifier`). */
export type SecretScanningKeys = ReadonlyMap<string, KeyObject>

const FLAG = '--secret-scanning-keys'
const IDENTIFIER = /^[\x21-\x7e]{1,200}$/

function bad(file: string, detail: string): ConfigError {
  return new ConfigError([FLAG], `${quote(file)}: ${detail}`)
}

/**
 * Parses the keys file's text.
 *
 * @throws {ConfigError} naming the flag, the file and the offending entry.
 * @example
 * parseSecretScanningKeys(JSON.stringify({ public_keys: [{ key_identifier: 'k1', key: pem }] }), 'keys.json')
 */
export function parseSecretScanningKeys(text: string, file: string): SecretScanningKeys {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw bad(file, `is not valid JSON: ${(error as Error).message}`)
  }
  const list = (json as { public_keys?: unknown } | null)?.public_keys
  if (typeof json !== 'object' || json === null || Array.isArray(json) || !Array.isArray(list)) {
    throw bad(file, 'must be an object with a "public_keys" array')
  }
  if (list.length === 0) throw bad(file, 'public_keys is empty: name at least one key')
  const keys = new Map<string, KeyObject>()
  list.forEach((entry: unknown, index) => {
    const where = `public_keys[${index}]`
    const { key_identifier: id, key } = (entry ?? {}) as { key_identifier?: unknown; key?: unknown }
    if (typeof id !== 'string' || !IDENTIFIER.test(id)) {
      throw bad(file, `${where}.key_identifier must be 1-200 visible ASCII characters`)
    }
    if (keys.has(id)) throw bad(file, `${where}.key_identifier ${quote(id)} is given twice`)
    if (typeof key !== 'string') throw bad(file, `${where}.key must be a PEM public key`)
    let parsed: KeyObject
    try {
      parsed = createPublicKey({ key, format: 'pem' })
    } catch {
      throw bad(file, `${where}.key is not a PEM public key`)
    }
    if (parsed.asymmetricKeyType !== 'ec' || parsed.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
      throw bad(file, `${where}.key must be an ECDSA P-256 key`)
    }
    keys.set(id, parsed)
  })
  return keys
}

/**
 * Reads and parses the keys file.
 *
 * @throws {ConfigError} naming the flag when the file cannot be read or is not a valid keys file.
 * @example
 * const keys = await readSecretScanningKeys('github-keys.json')
 */
export async function readSecretScanningKeys(file: string): Promise<SecretScanningKeys> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error'
    throw new ConfigError([FLAG], `cannot read ${quote(file)} (${code})`, { cause: error })
  }
  return parseSecretScanningKeys(text, file)
}
