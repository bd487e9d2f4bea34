import { describeValue } from '../../errors/option-error.js';
import { MAX_DELAY_MS } from './max-delay.js';

/** What {@link RateLimiter.acquire} takes besides the key and the limit. */
export interface AcquireOptions {
  /** Tokens to wait for. @default 1 */
  readonly cost?: number;
  /** The longest the caller will wait, in milliseconds (at most one hour). @default 60_000 */
  readonly maxWaitMs?: number;
  /** Aborting it stops the wait, rejects with its reason, and gives the reserved tokens back. */
  readonly signal?: AbortSignal;
}

const DEFAULT_MAX_WAIT_MS = 60_000;

export function acquireOptions(options: AcquireOptions): { cost: number; maxWaitMs: number } {
  const cost = options.cost ?? 1;
  if (!Number.isFinite(cost) || cost <= 0)
    throw new TypeError(
      `RateLimiter.acquire: cost must be a positive number, got ${describeValue(cost)}`,
    );
  const maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
  if (!Number.isFinite(maxWaitMs) || maxWaitMs < 0 || maxWaitMs > MAX_DELAY_MS) {
    throw new TypeError(
      `RateLimiter.acquire: maxWaitMs must be a number of milliseconds from 0 to ${MAX_DELAY_MS}, got ${describeValue(maxWaitMs)}`,
    );
  }
  return { cost, maxWaitMs };
}
