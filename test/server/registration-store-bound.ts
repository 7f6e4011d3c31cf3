/**
 * The bound every registration store keeps (the in-memory one and the reference server's Redis
 * one), asserted once for both.
 */
import { expect } from 'vitest'
import type { RegistrationStore } from '../../examples/server/oauth/registrations.js'
import type { ClientRegistration } from '../../src/oauth/client-registration.js'

/**
 * Resolves once `store`, made with `maxClients: 3` and empty, has shown its bound: at the bound the
 * oldest unused registration goes first, then the oldest used; marking an unknown id is no error.
 */
export async function expectOldestUnusedGoesFirst(
  store: RegistrationStore,
  registration: ClientRegistration,
): Promise<void> {
  for (const id of ['a', 'b', 'c']) await store.add(id, registration)
  await store.markUsed('a')
  await store.add('d', registration)
  expect(await store.size()).toBe(3)
  expect(await store.get('b')).toBeUndefined()
  expect(await store.get('a')).toEqual(registration)
  await store.markUsed('c')
  await store.markUsed('d')
  await store.add('e', registration)
  expect(await store.get('a')).toBeUndefined()
  expect(await store.size()).toBe(3)
  await store.markUsed('gone')
}
