import { describe, expect, test } from 'vitest'
import { bodyHasAccessToken } from '../../adapters/shared/access-token-parameter.js'
import { parseBodyParameters } from '../../examples/server/request/body.js'

// The parameters the bindings hand their framework as `req.body`: what the adapters check for an
// `access_token` (RFC 6750 §2.2), the same on Express, Fastify and Hono.
describe('parseBodyParameters', () => {
  const FORM = 'application/x-www-form-urlencoded'
  const JSON_TYPE = 'application/json'

  test.each([
    ['a form field', FORM, 'a=1&access_token=x', true],
    ['a JSON key', JSON_TYPE, '{"access_token":"x"}', true],
    ['a +json key', 'application/merge-patch+json', '{"access_token":"x"}', true],
    ['a text/plain body', 'text/plain', '{"access_token":"x"}', false],
    ['no content type', undefined, 'access_token=x', false],
    ['a JSON body that does not parse', JSON_TYPE, '{"access_token":', false],
    ['an empty body', JSON_TYPE, '', false],
  ])('%s', (_name, contentType, body, expected) => {
    expect(bodyHasAccessToken(parseBodyParameters(Buffer.from(body), contentType))).toBe(expected)
  })

  test.each([
    ['a form body', FORM, Buffer.concat([Buffer.from('access_token=x&a='), Buffer.from([0xff])])],
    [
      'a JSON body',
      JSON_TYPE,
      Buffer.concat([Buffer.from('{"access_token":"x","a":"'), Buffer.from([0xff, 0x22, 0x7d])]),
    ],
  ])('a byte that is not UTF-8 does not hide the parameter in %s', (_name, contentType, body) => {
    expect(bodyHasAccessToken(parseBodyParameters(body, contentType))).toBe(true)
  })
})
