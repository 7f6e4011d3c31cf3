/**
 * A token store for a resource server on another host: it asks the issuing authorization server's
 * RFC 7662 introspection endpoint about each token (bounded cache, request deadline, fail closed),
 * so that the same adapters and the same decisions guard routes without sharing the token store.
 * Runs wherever `fetch` does: Node, Bun, Deno, Workers.
 *
 * @packageDocumentation
 * @module data-access-policy/introspection
 */
export { IntrospectionTokenStore, type IntrospectionTokenStoreOptions } from './introspection-token-store.js'
