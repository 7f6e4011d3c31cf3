import { defineConfig } from 'tsup'

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    oauth: 'src/oauth/index.ts',
    introspection: 'src/introspection/index.ts',
    express: 'adapters/express/index.ts',
    fastify: 'adapters/fastify/index.ts',
    hono: 'adapters/hono/index.ts',
    testing: 'src/testing/index.ts',
    'testing/arbitraries': 'src/testing/arbitraries.ts',
    client: 'src/client.ts',
    redis: 'adapters/redis/index.ts',
    openapi: 'src/openapi/index.ts',
    mcp: 'adapters/mcp/index.ts',
    cli: 'cli/bin.ts',
  },
  format: ['esm'],
  target: 'node20',
  platform: 'neutral',
  dts: true,
  // One chunk graph for every entry, so an error class is the same class across subpaths.
  splitting: true,
  treeshake: true,
  clean: true,
  sourcemap: true,
  external: [
    'express',
    'fastify',
    'fastify-plugin',
    'hono',
    '@hono/node-server',
    'zod',
    'fast-check',
    'ioredis',
    '@noble/hashes',
  ],
})
