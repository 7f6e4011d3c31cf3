/** A test app listening on 127.0.0.1. */
export interface RunningApp {
  readonly port: number
  close(): Promise<void>
}

/** The frameworks the adapters' behaviour table runs on. */
export const FRAMEWORKS = ['express', 'fastify', 'hono'] as const

/** One of {@link FRAMEWORKS}. */
export type Framework = (typeof FRAMEWORKS)[number]
