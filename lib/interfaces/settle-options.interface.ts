import type { ExecutionContext } from '@nestjs/common';

/**
 * What a limit's `settle` is given once the handler is done: what it
 * returned (for a stream, what it emitted last), what it threw, the
 * response, the call, and the estimate reserved at admission.
 */
export interface RateLimitSettleOutcome {
  /** What the handler returned, or for a stream (`@Sse()`, an observable) what it emitted last; `undefined` when it threw. */
  readonly result: unknown;
  /** The response the transport found (Express `res`, Fastify `reply`); `undefined` where there is none. */
  readonly response: unknown;
  /** What the handler threw (or its observable errored with); `undefined` when it completed. */
  readonly error: unknown;
  /** The call being settled. */
  readonly context: ExecutionContext;
  /** The cost charged at admission (the estimate): what the bucket is settled from. */
  readonly reserved: number;
}
