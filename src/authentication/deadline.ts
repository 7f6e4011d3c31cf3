/** The error a lookup fails with when it outlives its deadline. */
export class DeadlineExceeded extends Error {
  constructor() {
    super('deadline exceeded')
    this.name = 'DeadlineExceeded'
  }
}

interface Pending {
  readonly deadline: number
  readonly fail: () => void
}

// One shared sweep instead of a timer per request: arming and clearing a timer costs more than the
// whole in-memory lookup it guards. Deadlines are therefore honoured to within SWEEP_MS.
const SWEEP_MS = 10
const pending = new Set<Pending>()
let sweeper: ReturnType<typeof setInterval> | undefined

function sweep(): void {
  const now = performance.now()
  for (const entry of pending) {
    if (entry.deadline <= now) {
      pending.delete(entry)
      // After a stall of the event loop the answer may have arrived unread: timers run before I/O
      // in each turn, so the failure waits one turn and an answer read in it wins (a settled
      // promise ignores the late rejection). A stall must never turn an answer into a 503.
      setTimeout(entry.fail, 0)
    }
  }
  // Only the running sweeper calls this, so `sweeper` is set.
  if (pending.size === 0) {
    clearInterval(sweeper)
    sweeper = undefined
  }
}

function watch(entry: Pending): void {
  pending.add(entry)
  if (sweeper === undefined) {
    sweeper = setInterval(sweep, SWEEP_MS)
    // A pending lookup must not keep a process alive that has nothing else to do.
    ;(sweeper as { unref?: () => void }).unref?.()
  }
}

/**
 * Settles like `promise`, or rejects with {@link DeadlineExceeded} once `ms` have passed (to within
 * about 10 ms) and one more turn of the event loop has brought no answer. The promise itself is not
 * cancelled; an answer later than that is ignored.
 */
export function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const entry: Pending = { deadline: performance.now() + ms, fail: () => reject(new DeadlineExceeded()) }
    watch(entry)
    promise.then(
      (value) => {
        pending.delete(entry)
        resolve(value)
      },
      (error: unknown) => {
        pending.delete(entry)
        reject(error)
      },
    )
  })
}
