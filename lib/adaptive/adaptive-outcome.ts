/**
 * One observation fed to an adaptive limit:
 * - `'success'`: the request was served normally;
 * - `'failure'`: the downstream failed (5xx, timeout, a thrown non-client error);
 * - `{ latencyMs }`: served, and this is how long it took. It counts as a
 *   congestion signal (like a failure) when the limit has a `latencyTargetMs`
 *   and the latency exceeds it, as a success otherwise;
 * - `{ latencyMs, failed: true }`: a failure that took `latencyMs`.
 *
 * Giving the latency also tells the controller when the request was admitted
 * (`now - latencyMs`): outcomes of requests admitted before the last decrease
 * are ignored, because they describe the rate that was already cut (TCP's "one
 * cut per round trip"). Without it the request is taken as admitted just now.
 *
 * Requests the rate limiter itself denied are not outcomes: they never reached
 * what the limit protects.
 *
 * @publicApi
 */
export type AdaptiveOutcome =
  'success' | 'failure' | { readonly latencyMs: number; readonly failed?: boolean };

/**
 * Whether an outcome counts against the window (failure or congestion).
 * Throws a `TypeError` for anything that is not an {@link AdaptiveOutcome},
 * so a typo in application code (`'fail'`) is loud rather than a silent success.
 *
 * @internal
 */
export function isBadOutcome(
  outcome: AdaptiveOutcome,
  latencyTargetMs: number | undefined,
): boolean {
  if (outcome === 'success') return false;
  if (outcome === 'failure') return true;
  if (typeof outcome === 'object' && outcome !== null) {
    const latencyMs = outcome.latencyMs;
    const failed = outcome.failed;
    if (
      typeof latencyMs === 'number' &&
      latencyMs >= 0 &&
      latencyMs !== Number.POSITIVE_INFINITY &&
      (failed === undefined || typeof failed === 'boolean')
    ) {
      return failed === true || (latencyTargetMs !== undefined && latencyMs > latencyTargetMs);
    }
  }
  throw new TypeError(
    `Adaptive outcome must be 'success', 'failure' or { latencyMs: <number >= 0>, failed?: <boolean> }, got ${describe(outcome)}`,
  );
}

function describe(value: unknown): string {
  try {
    return typeof value === 'string' ? `'${value}'` : (JSON.stringify(value) ?? String(value));
  } catch {
    return String(value);
  }
}
