import { describe, expect, it } from 'vitest'
import {
  checkClientIdUrl,
  DEFAULT_DOCUMENT_CACHE_BOUNDS,
  documentCacheLifetimeMs,
  isPlainText,
  metadataDocumentClient,
  parseClientMetadataDocument,
} from '../../src/oauth/client-metadata-document.js'
import { isRegistrableRedirectUri } from '../../src/oauth/registrable-redirect-uri.js'

const ID = 'https://app.example.com/oauth/client.json'

describe('checkClientIdUrl', () => {
  it.each([
    [ID, 'app.example.com'],
    ['https://app.example.com/c?v=1', 'app.example.com'],
    ['https://93.184.215.14/c', '93.184.215.14'],
    ['https://[2606:4700::1]/c', '[2606:4700::1]'],
  ])('accepts %s (host %s)', (url, host) => {
    const check = checkClientIdUrl(url)
    expect(check).toMatchObject({ ok: true, host })
  })

  it.each([
    ['http://app.example.com/c', 'not an https URL'],
    ['ftp://app.example.com/c', 'not an https URL'],
    ['https://app.example.com', 'no path'],
    ['https://app.example.com/', 'no path'],
    ['https://app.example.com/c#x', 'fragment'],
    ['https://user@app.example.com/c', 'user name or password'],
    ['https://u:p@app.example.com/c', 'user name or password'],
    ['https://app.example.com/a/../c', '. or .. segment'],
    ['https://app.example.com/a/./c', '. or .. segment'],
    ['https://app.example.com/a/%2e%2E/c', '. or .. segment'],
    ['https://app.example.com/..', '. or .. segment'],
    ['https://APP.example.com/c', 'not written as'],
    ['https://app.example.com:443/c', 'not written as'],
    ['https://app.example.com/c d', 'not written as'],
    ['not a url', 'not a URL'],
    [`https://app.example.com/${'a'.repeat(2000)}`, 'longer than'],
    ['https://10.0.0.1/c', 'not a public address'],
    ['https://127.0.0.1/c', 'not a public address'],
    ['https://169.254.169.254/latest/meta-data', 'not a public address'],
    ['https://[::1]/c', 'not a public address'],
    ['https://[::ffff:a00:1]/c', 'not a public address'],
    ['https://[::ffff:10.0.0.1]/c', 'not written as'],
    ['https://[fe80::1]/c', 'not a public address'],
    ['https://0.0.0.0/c', 'not a public address'],
    // The WHATWG parser reads these legacy forms as 10.0.0.1 and 127.0.0.1.
    ['https://0xa000001/c', 'not written as'],
    ['https://2130706433/c', 'not written as'],
    ['http://127.0.0.1:8080/c', 'not an https URL'],
    ['http://[::1]:8080/c', 'not an https URL'],
    // A document is on the default port: a client_id must not aim the fetch at another service.
    ['https://app.example.com:8443/c', 'port other than 443'],
    ['https://victim.example:22/x', 'port other than 443'],
    ['https://93.184.215.14:25/c', 'port other than 443'],
    ['https://[2606:4700::1]:6379/c', 'port other than 443'],
  ])('refuses %s (%s)', (url, reason) => {
    const check = checkClientIdUrl(url)
    expect(check.ok).toBe(false)
    if (!check.ok) expect(check.reason).toContain(reason)
  })

  it.each([
    ['http://127.0.0.1:8080/c', true],
    ['http://[::1]:8080/c', true],
    ['https://127.0.0.1:8080/c', true],
    ['http://localhost:8080/c', false],
    ['http://10.0.0.1:8080/c', false],
    ['http://127.0.0.2:8080/c', false],
    ['http://127.0.0.1:8080/', false],
    ['http://127.0.0.1/c', true],
    ['https://[::1]:65535/c', true],
    ['https://app.example.com:8443/c', false],
    ['https://app.example.com/c', true],
  ])('with allowHttpLoopback, %s passes: %s', (url, ok) => {
    expect(checkClientIdUrl(url, { allowHttpLoopback: true }).ok).toBe(ok)
  })

  it('hands back the literal address, none for a name', () => {
    expect(checkClientIdUrl('https://[2606:4700::1]/c')).toMatchObject({ address: '2606:4700::1' })
    expect(checkClientIdUrl(ID)).toMatchObject({ address: undefined })
  })
})

const VALID = {
  client_id: ID,
  redirect_uris: ['http://127.0.0.1:33418/cb', 'https://app.example.com/cb'],
  token_endpoint_auth_method: 'none',
}

describe('parseClientMetadataDocument', () => {
  it('accepts a public client document and makes a client without offline access', () => {
    const parsed = parseClientMetadataDocument(ID, {
      ...VALID,
      client_name: 'My Agent',
      client_uri: 'https://app.example.com',
      logo_uri: 'https://app.example.com/logo.png',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    })
    expect(parsed).toEqual({
      ok: true,
      metadata: {
        clientId: ID,
        redirectUris: VALID.redirect_uris,
        name: 'My Agent',
        clientUri: 'https://app.example.com',
      },
    })
    if (parsed.ok) {
      expect(metadataDocumentClient(parsed.metadata)).toEqual({
        id: ID,
        redirectUris: VALID.redirect_uris,
        offline: false,
        name: 'My Agent',
      })
    }
  })

  it('takes an empty client_name as none', () => {
    const parsed = parseClientMetadataDocument(ID, { ...VALID, client_name: '' })
    expect(parsed.ok && parsed.metadata.name).toBeUndefined()
    if (parsed.ok) expect(metadataDocumentClient(parsed.metadata)).not.toHaveProperty('name')
  })

  it.each<[string, unknown, string]>([
    ['not an object', [], 'not a JSON object'],
    ['null', null, 'not a JSON object'],
    ['a string', 'x', 'not a JSON object'],
    ['another client_id', { ...VALID, client_id: 'https://evil.example/c' }, 'client_id'],
    ['client_id with a slash more', { ...VALID, client_id: `${ID}/` }, 'client_id'],
    ['no client_id', { ...VALID, client_id: undefined }, 'client_id'],
    ['no redirect_uris', { ...VALID, redirect_uris: undefined }, 'non-empty array'],
    ['empty redirect_uris', { ...VALID, redirect_uris: [] }, 'non-empty array'],
    [
      'too many redirect_uris',
      { ...VALID, redirect_uris: Array(21).fill('https://a.example/cb') },
      'at most 20',
    ],
    ['a private-use scheme', { ...VALID, redirect_uris: ['myapp://cb'] }, 'myapp://cb'],
    ['localhost', { ...VALID, redirect_uris: ['http://localhost:1/cb'] }, 'localhost'],
    ['a fragment', { ...VALID, redirect_uris: ['https://a.example/cb#x'] }, 'not an https URI'],
    ['a number', { ...VALID, redirect_uris: [1] }, 'not an https URI'],
    ['no auth method', { ...VALID, token_endpoint_auth_method: undefined }, '"none"'],
    ['client_secret_basic', { ...VALID, token_endpoint_auth_method: 'client_secret_basic' }, '"none"'],
    ['private_key_jwt', { ...VALID, token_endpoint_auth_method: 'private_key_jwt' }, '"none"'],
    ['a secret', { ...VALID, client_secret: 's' }, 'client secret'],
    ['a secret expiry', { ...VALID, client_secret_expires_at: 0 }, 'client secret'],
    ['implicit grant', { ...VALID, grant_types: ['implicit'] }, 'grant_types'],
    ['refresh only', { ...VALID, grant_types: ['refresh_token'] }, 'grant_types'],
    ['grant_types not a list', { ...VALID, grant_types: 'authorization_code' }, 'grant_types'],
    [
      'client_credentials',
      { ...VALID, grant_types: ['authorization_code', 'client_credentials'] },
      'grant_types',
    ],
    ['token response', { ...VALID, response_types: ['token'] }, 'response_types'],
    ['response_types not a list', { ...VALID, response_types: 'code' }, 'response_types'],
    ['a long name', { ...VALID, client_name: 'x'.repeat(101) }, 'client_name'],
    ['a name with a line break', { ...VALID, client_name: 'a\nb' }, 'client_name'],
    ['a name with a right-to-left override', { ...VALID, client_name: 'Evil\u202eelgoog' }, 'client_name'],
    ['a name with a byte order mark', { ...VALID, client_name: '\ufeffMy Agent' }, 'client_name'],
    ['a name that is no string', { ...VALID, client_name: 1 }, 'client_name'],
    ['an http client_uri', { ...VALID, client_uri: 'http://app.example.com' }, 'client_uri'],
    ['a client_uri that is no URL', { ...VALID, client_uri: 'app' }, 'client_uri'],
    ['a client_uri that is no string', { ...VALID, client_uri: 7 }, 'client_uri'],
  ])('refuses %s', (_, document, reason) => {
    const parsed = parseClientMetadataDocument(ID, document)
    expect(parsed.ok).toBe(false)
    if (!parsed.ok) expect(parsed.reason).toContain(reason)
  })
})

describe('isPlainText', () => {
  it.each<[unknown, number, boolean]>([
    ['My CLI', 100, true],
    ['Ünïcödé ✓', 100, true],
    ['', 100, true],
    ['abc', 2, false],
    ['a\tb', 100, false],
    ['a\u0085b', 100, false],
    ['a\u007fb', 100, false],
    [3, 100, false],
  ])('%j within %i: %s', (value, max, expected) => {
    expect(isPlainText(value, max)).toBe(expected)
  })

  // Invisible and bidirectional formatting characters would let a name pose as another on the
  // consent page ("Evil\u202Eelgoog" shows as "Evilgoogle"): each is refused, anywhere in the text.
  it.each<[string, string]>([
    ['U+200B zero width space', '\u200b'],
    ['U+200C zero width non-joiner', '\u200c'],
    ['U+200D zero width joiner', '\u200d'],
    ['U+200E left-to-right mark', '\u200e'],
    ['U+200F right-to-left mark', '\u200f'],
    ['U+202A left-to-right embedding', '\u202a'],
    ['U+202B right-to-left embedding', '\u202b'],
    ['U+202C pop directional formatting', '\u202c'],
    ['U+202D left-to-right override', '\u202d'],
    ['U+202E right-to-left override', '\u202e'],
    ['U+2060 word joiner', '\u2060'],
    ['U+2061 function application', '\u2061'],
    ['U+2064 invisible plus', '\u2064'],
    ['U+2066 left-to-right isolate', '\u2066'],
    ['U+2067 right-to-left isolate', '\u2067'],
    ['U+2068 first strong isolate', '\u2068'],
    ['U+2069 pop directional isolate', '\u2069'],
    ['U+2028 line separator', '\u2028'],
    ['U+2029 paragraph separator', '\u2029'],
    ['U+FEFF zero width no-break space', '\ufeff'],
  ])('refuses %s, alone, leading and inside a name', (_, character) => {
    for (const value of [character, `${character}My CLI`, `Evil${character}elgoog`, `My CLI${character}`]) {
      expect(isPlainText(value, 100)).toBe(false)
    }
  })

  it.each<[string, string]>([
    ['U+200A hair space', 'a\u200ab'],
    ['U+2010 hyphen', 'a\u2010b'],
    ['U+2027 hyphenation point', 'a\u2027b'],
    ['U+202F narrow no-break space', 'a\u202fb'],
    ['U+206A, past the refused range', 'a\u206ab'],
    ['Hebrew letters', 'שלום'],
    ['Arabic letters', 'مرحبا'],
  ])('keeps %s', (_, value) => {
    expect(isPlainText(value, 100)).toBe(true)
  })
})

describe('isRegistrableRedirectUri', () => {
  it.each<[string, boolean]>([
    ['http://127.0.0.1/cb', true],
    ['http://127.0.0.1:33418/cb', true],
    ['http://[::1]:8080/', true],
    ['https://app.example.com/cb', true],
    ['https://app.example.com/cb?x=1', true],
    ['http://localhost:8080/cb', false],
    ['http://app.example.com/cb', false],
    ['https://app.example.com/cb#f', false],
    ['https://u:p@app.example.com/cb', false],
    ['https://u@app.example.com/cb', false],
    ['myapp://cb', false],
    ['javascript:alert(1)', false],
    ['not a uri', false],
    [`https://app.example.com/${'a'.repeat(2000)}`, false],
  ])('%s: %s', (uri, expected) => {
    expect(isRegistrableRedirectUri(uri)).toBe(expected)
  })
})

describe('documentCacheLifetimeMs', () => {
  const bounds = DEFAULT_DOCUMENT_CACHE_BOUNDS
  it.each<[string | undefined, number]>([
    [undefined, 3_600_000],
    ['', 3_600_000],
    ['public', 3_600_000],
    ['max-age=300', 300_000],
    ['public, max-age=300', 300_000],
    ['MAX-AGE=300', 300_000],
    ['max-age="300"', 300_000],
    ['max-age=0', 60_000],
    ['max-age=5', 60_000],
    ['max-age=999999999', 86_400_000],
    ['max-age=-1', 3_600_000],
    ['max-age=abc', 3_600_000],
    ['no-store', 60_000],
    ['no-cache, max-age=600', 60_000],
    ['private, no-store', 60_000],
  ])('%j keeps the document %i ms', (header, expected) => {
    expect(documentCacheLifetimeMs(header, bounds)).toBe(expected)
  })

  it('keeps a default outside the bounds within them', () => {
    expect(documentCacheLifetimeMs(undefined, { minMs: 10, maxMs: 20, defaultMs: 5 })).toBe(10)
    expect(documentCacheLifetimeMs(undefined, { minMs: 10, maxMs: 20, defaultMs: 50 })).toBe(20)
  })
})
