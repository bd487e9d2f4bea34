import { algorithmOf, type BucketState } from '../../algorithms/algorithm.js';
import type { RateLimitDecision } from '../../algorithms/rate-limit-decision.js';
import type {
  BucketsRequest,
  ConsumeRequest,
  ConsumeResult,
} from '../rate-limit-store.interface.js';

/**
 * Reference semantics: what a store must answer, computed with the pure
 * algorithms (GCRA, windows) over a plain Map. All-or-nothing, and on a denial the admitting
 * checks report their bucket as it stands.
 *
 * @internal
 */
export class ModelStore {
  private readonly tats = new Map<string, BucketState>();
  /**
   * Like the stores, the model computes in time relative to an epoch (its
   * first `now`): at Date.now() magnitudes doubles are 0.24 µs apart, and the
   * algorithm rounds each charge up to that grid, which would make the model
   * less precise than the stores it checks.
   */
  private epoch: number | undefined;

  consume({ checks, now: absolute }: ConsumeRequest): ConsumeResult {
    const now = this.relative(absolute);
    const origin = this.epoch!;
    const outcomes = checks.map((check) =>
      algorithmOf(check.limit).consume(
        this.tats.get(check.key),
        now,
        check.limit,
        check.cost,
        origin,
      ),
    );
    const allowed = outcomes.every((outcome) => outcome.decision.allowed);
    const decisions = outcomes.map((outcome, i): RateLimitDecision => {
      const check = checks[i]!;
      if (allowed || !outcome.decision.allowed) return outcome.decision;
      return algorithmOf(check.limit).peek(this.tats.get(check.key), now, check.limit, origin);
    });
    if (allowed) outcomes.forEach((outcome, i) => this.tats.set(checks[i]!.key, outcome.state));
    return { allowed, decisions };
  }

  peek({ checks, now }: BucketsRequest): ConsumeResult {
    const relative = this.relative(now);
    return {
      allowed: true,
      decisions: checks.map((check) =>
        algorithmOf(check.limit).peek(this.tats.get(check.key), relative, check.limit, this.epoch!),
      ),
    };
  }

  reset({ checks }: BucketsRequest): void {
    for (const check of checks) this.tats.delete(check.key);
  }

  private relative(now: number): number {
    this.epoch ??= now;
    return now - this.epoch;
  }
}
