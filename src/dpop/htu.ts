/**
 * The `htu` form of a request URL (RFC 9449 §4.3 step 9): scheme, host, port unless the default, and
 * path — no query, no fragment — normalised as RFC 3986 §6.2.2 and §6.2.3 ask (case of scheme and
 * host, default port, empty path as `/`). `undefined` for anything that is not an absolute http(s)
 * URL.
 *
 * @example
 * htuOf('HTTPS://API.example.com:443/v1/datasets?x=1#f') // 'https://api.example.com/v1/datasets'
 */
export function htuOf(url: string): string | undefined {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return undefined
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return undefined
  if (parsed.username !== '' || parsed.password !== '') return undefined
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`
}
