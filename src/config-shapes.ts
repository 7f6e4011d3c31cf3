import { z } from 'zod'

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]'])

/**
 * Whether `value` is an absolute `https` URL (`http` only on a loopback host, where nothing leaves
 * the machine) without user info or fragment: the one rule for the URLs this library calls or
 * advertises. Internal to the package.
 */
export function isSecureEndpointUrl(value: string): boolean {
  // The text is checked for '#': a bare '#' parses to an empty `hash`, yet is still a fragment.
  if (!URL.canParse(value) || value.includes('#')) return false
  const url = new URL(value)
  if (url.username !== '' || url.password !== '') return false
  return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))
}

/** A zod schema for an option that must be a function. Internal to the package. */
export function functionShape<F>() {
  return z.custom<F>((value) => typeof value === 'function', { message: 'must be a function' })
}
