import fc from 'fast-check'
import { describe, test } from 'vitest'
import { authenticateRequest } from '../../src/authentication/authenticate.js'
import { parseScopes, SCOPES } from '../../src/decisions/scopes.js'
import { MemoryTokenStore } from '../../src/tokens/memory-token-store.js'
import { createApiToken, renameToken, rescopeToken, revokeToken } from '../../src/tokens/token-record.js'

// The model: what a token should do, independent of records and stores.
interface ModelToken {
  value: string
  id: string
  scopes: string
  revoked: boolean
  expiresAt: number | undefined
}
interface Model {
  now: number
  tokens: ModelToken[]
}
interface Real {
  store: MemoryTokenStore
  clock: { now: number }
}

type LifecycleCommand = fc.AsyncCommand<Model, Real>

const scopesArbitrary = fc.subarray([...SCOPES])

class Create implements LifecycleCommand {
  constructor(
    readonly scopes: readonly string[],
    readonly ttl: number | undefined,
  ) {}
  check = () => true
  async run(model: Model, real: Real) {
    const expiresAt = this.ttl === undefined ? undefined : real.clock.now + this.ttl
    const { record, value } = createApiToken({
      userId: 'alice',
      name: `token ${model.tokens.length}`,
      scopes: this.scopes,
      now: real.clock.now,
      ...(expiresAt === undefined ? {} : { expiresAt }),
    })
    await real.store.save(record)
    model.tokens.push({
      value,
      id: record.id,
      scopes: parseScopes(this.scopes).toString(),
      revoked: false,
      expiresAt,
    })
  }
  toString = () => `create(${this.scopes.join(' ')}, ttl ${this.ttl})`
}

abstract class OnToken implements LifecycleCommand {
  constructor(readonly index: number) {}
  check = (model: Readonly<Model>) => model.tokens.length > 0
  pick(model: Model): ModelToken {
    return model.tokens[this.index % model.tokens.length]!
  }
  abstract run(model: Model, real: Real): Promise<void>
}

class Use extends OnToken {
  async run(model: Model, real: Real) {
    const token = this.pick(model)
    const result = await authenticateRequest(
      { authorization: [`Bearer ${token.value}`] },
      { tokens: real.store, now: () => real.clock.now, storeTimeoutMs: 1000 },
    )
    const active = !token.revoked && (token.expiresAt === undefined || model.now < token.expiresAt)
    if (result.ok !== active)
      throw new Error(`expected ${active ? 'active' : 'rejected'}, got ${JSON.stringify(result)}`)
    if (result.ok && result.principal.scopes.toString() !== token.scopes) {
      throw new Error(`stale scopes: ${result.principal.scopes.toString()} instead of ${token.scopes}`)
    }
    if (!result.ok && result.decision.code !== 'invalid_token')
      throw new Error(`wrong code ${result.decision.code}`)
  }
  override toString = () => `use(${this.index})`
}

class Rename extends OnToken {
  constructor(
    index: number,
    readonly name: string,
  ) {
    super(index)
  }
  async run(model: Model, real: Real) {
    const token = this.pick(model)
    const record = (await real.store.findById(token.id))!
    await real.store.update(renameToken(record, this.name))
  }
  override toString = () => `rename(${this.index}, ${JSON.stringify(this.name)})`
}

class Rescope extends OnToken {
  constructor(
    index: number,
    readonly scopes: readonly string[],
  ) {
    super(index)
  }
  async run(model: Model, real: Real) {
    const token = this.pick(model)
    const record = (await real.store.findById(token.id))!
    await real.store.update(rescopeToken(record, this.scopes))
    token.scopes = parseScopes(this.scopes).toString()
  }
  override toString = () => `rescope(${this.index}, ${this.scopes.join(' ')})`
}

class Revoke extends OnToken {
  async run(model: Model, real: Real) {
    const token = this.pick(model)
    const record = (await real.store.findById(token.id))!
    await real.store.update(revokeToken(record, real.clock.now))
    token.revoked = true
  }
  override toString = () => `revoke(${this.index})`
}

class Advance implements LifecycleCommand {
  constructor(readonly ms: number) {}
  check = () => true
  async run(model: Model, real: Real) {
    model.now += this.ms
    real.clock.now += this.ms
  }
  toString = () => `advance(${this.ms})`
}

const commands = [
  fc
    .tuple(scopesArbitrary, fc.option(fc.integer({ min: 1, max: 10_000 }), { nil: undefined }))
    .map(([scopes, ttl]) => new Create(scopes, ttl)),
  fc.nat().map((index) => new Use(index)),
  fc
    .tuple(
      fc.nat(),
      fc.string({ minLength: 1, maxLength: 20 }).filter((s) => s.trim().length > 0 && !/\p{Cc}/u.test(s)),
    )
    .map(([index, name]) => new Rename(index, name)),
  fc.tuple(fc.nat(), scopesArbitrary).map(([index, scopes]) => new Rescope(index, scopes)),
  fc.nat().map((index) => new Revoke(index)),
  fc.integer({ min: 1, max: 5_000 }).map((ms) => new Advance(ms)),
]

describe('token lifecycle against a model (issue: tokens and bearer authentication)', () => {
  test('a revoked or expired token never authenticates; scopes seen are always the current ones', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 40 }), async (cmds) => {
        const start = Date.parse('2026-11-22T12:00:00Z')
        const setup = () => ({
          model: { now: start, tokens: [] },
          real: { store: new MemoryTokenStore(), clock: { now: start } },
        })
        await fc.asyncModelRun(setup, cmds)
      }),
      { numRuns: 300, seed: 6 },
    )
  })
})
