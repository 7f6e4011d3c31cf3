import { expect, test } from 'vitest'
import { isCanonicalTarget } from '../../examples/server/request/target.js'

test.each([
  '/api/v1/datasets/acme/claims',
  '/api/v1/datasets/acme/claims?maxResults=5&pageToken=%2F',
  '/api/v1/datasets/acme/claims.v2/metadata',
  '/',
])('routes %s', (target) => {
  expect(isCanonicalTarget(target)).toBe(true)
})

test.each([
  '/%61pi/v1/datasets/acme/claims',
  '/api/v1/datasets/acme/cl%61ims',
  '/api/v1/datasets/acme/claims/',
  '/api/v1/datasets/x/../acme/claims',
  '/api/v1/datasets/acme/./claims',
  '/api//v1/datasets/acme/claims',
  '/api\\v1/datasets/acme/claims',
  '/api/v1/datasets/acme/claims;x=1',
  'http://example.com/api/v1/datasets/acme/claims',
  '*',
  '',
  undefined,
])('refuses %j before any router', (target) => {
  expect(isCanonicalTarget(target)).toBe(false)
})
