/**
 * `req.principal` and `req.accessDecision` as accessors on Express's shared request prototype,
 * backed by one weak-map entry per request: Express's Fastify-style `decorateRequest`.
 *
 * Why: Express gives every request its app's prototype (`Object.setPrototypeOf`), after which V8
 * builds a new hidden class for each property first stored on that request: measured, the two
 * stores were half of what the guard cost an Express route.
 */
import { IncomingMessage } from 'node:http'
import type { Allow } from '../../src/decisions/decision.js'
import type { Principal } from '../../src/decisions/principal.js'

type AccessState = { principal?: Principal | undefined; accessDecision?: Allow | undefined }

// One entry per request for both values: a guarded request stores its principal and its decision,
// and a weak map's insertion costs more than a field write on the entry already there.
const states = new WeakMap<object, AccessState>()

// The request's entry, made on its first store.
function stateOf(req: object): AccessState {
  let state = states.get(req)
  if (state === undefined) {
    state = {}
    states.set(req, state)
  }
  return state
}

function accessor(key: keyof AccessState): PropertyDescriptor {
  return {
    configurable: true,
    enumerable: false,
    get(this: object) {
      return states.get(this)?.[key]
    },
    set(this: object, value: AccessState[typeof key]) {
      stateOf(this)[key] = value as never
    },
  }
}

const PROPERTIES: Readonly<Record<keyof AccessState, PropertyDescriptor>> = {
  principal: accessor('principal'),
  accessDecision: accessor('accessDecision'),
}

// Per request prototype: whether the accessors the chain carries are this module's, so that the
// adapter may read and write the weak map directly. Looking a property up on an Express request walks
// a prototype chain V8 keeps in dictionary mode (apps set each request's prototype): the adapter's
// own reads and writes skip that walk, a measured part of a guarded request's cost.
const direct = new WeakMap<object, boolean>()

/**
 * Makes sure the request's prototype chain carries the two accessors, added once to the prototype
 * Express's apps share (the one just above Node's `IncomingMessage.prototype`; a mounted app's
 * request prototype inherits from its parent's, so every app of the process sees the same values).
 * A prototype that already has either property (another copy of this adapter, or a host's own) is
 * left as it is: stores then go wherever that definition sends them, and reads come from the same
 * place, so nothing is lost — only the speed-up.
 *
 * @returns true when the request's `principal` and `accessDecision` are this module's accessors, so
 * that {@link readPrincipal} and {@link storeAccess} may go to their values directly.
 */
export function prepareRequest(req: object): boolean {
  const own = Object.getPrototypeOf(req) as object | null
  if (own === null) return false
  let known = direct.get(own)
  if (known === undefined) {
    known = installAccessors(own)
    direct.set(own, known)
  }
  // A value the host stored on the request itself (before the accessors existed, or with
  // `defineProperty`) hides the accessors from every reader: the adapter reads it the same way.
  return known && !Object.hasOwn(req, 'principal') && !Object.hasOwn(req, 'accessDecision')
}

function installAccessors(own: object): boolean {
  let shared: object = own
  for (;;) {
    if (Object.hasOwn(shared, 'principal') || Object.hasOwn(shared, 'accessDecision')) {
      return (
        Object.getOwnPropertyDescriptor(shared, 'principal')?.get === PROPERTIES.principal.get &&
        Object.getOwnPropertyDescriptor(shared, 'accessDecision')?.get === PROPERTIES.accessDecision.get
      )
    }
    const parent = Object.getPrototypeOf(shared) as object | null
    if (parent === null) return false
    if (parent === IncomingMessage.prototype) break
    shared = parent
  }
  if ('principal' in shared || 'accessDecision' in shared) return false
  Object.defineProperties(shared, PROPERTIES)
  return true
}

/**
 * The principal stored on a request: straight from this module's map when `direct` (what
 * {@link prepareRequest} answered), through the property otherwise.
 */
export function readPrincipal(
  req: { readonly principal?: Principal },
  direct: boolean,
): Principal | undefined {
  return direct ? states.get(req)?.principal : req.principal
}

/** Stores a request's principal and, when given, its allow decision, as {@link readPrincipal} reads them. */
export function storeAccess(
  req: { principal?: Principal; accessDecision?: Allow },
  direct: boolean,
  principal: Principal,
  decision?: Allow,
): void {
  if (!direct) {
    req.principal = principal
    if (decision !== undefined) req.accessDecision = decision
    return
  }
  const state = stateOf(req)
  state.principal = principal
  if (decision !== undefined) state.accessDecision = decision
}
