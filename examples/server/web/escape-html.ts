/** Escaping text for HTML, in a module of its own so that every page module can use it. */

/**
 * Escapes text for HTML element content and quoted attribute values.
 *
 * @example
 * escapeHtml('<a href="x">') // '&lt;a href=&quot;x&quot;&gt;'
 */
export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;')
}
