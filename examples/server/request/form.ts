/**
 * Form bodies of the pages (`application/x-www-form-urlencoded`, HTML's default). Repeated fields
 * are kept — scopes are checkboxes — so callers read them with `getAll`.
 */
import type { ApiRequest } from '../routes/route-set.js'

/** Whether a `Content-Type` names a form body, parameters ignored. */
export function isFormContentType(contentType: string | undefined): boolean {
  return contentType?.split(';', 1)[0]?.trim().toLowerCase() === 'application/x-www-form-urlencoded'
}

/**
 * Parses a form body. Any other content type, or bytes that are not UTF-8, give an empty form: a
 * page then answers as for missing fields (its CSRF check fails first), never from a guess.
 *
 * @example
 * parseFormBody(Buffer.from('scopes=data.data&scopes=wokflow.read'), 'application/x-www-form-urlencoded')
 *   .getAll('scopes') // ['data.data', 'wokflow.read']
 */
export function parseFormBody(body: Buffer, contentType: string | undefined): URLSearchParams {
  if (!isFormContentType(contentType)) return new URLSearchParams()
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body)
  } catch {
    return new URLSearchParams()
  }
  return new URLSearchParams(text)
}

/**
 * Reads and parses a request's form body (capped like every body: past 64 KiB the route answers 413).
 *
 * @example
 * const form = await readForm(request)
 * form.get('name')
 */
export async function readForm(request: ApiRequest): Promise<URLSearchParams> {
  return parseFormBody(await request.body(), request.contentType)
}
