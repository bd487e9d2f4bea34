import type {
  ConsumeRequest,
  ConsumeResult,
  RateLimitCheck,
} from '../../lib/store/rate-limit-store.interface.js';

/**
 * One check of a {@link LeaseRequest}: a consume check, plus how many more
 * tokens the caller would like to take along.
 */
export interface LeaseCheck extends RateLimitCheck {
  /**
   * Whole tokens wanted beyond `cost`, taken only as far as the bucket holds
   * them after the cost (0: a plain consume). Never decides the admission.
   */
  readonly maxExtra: number;
  /**
   * With {@link LeaseRequest.fleet}: whole tokens to take instead of
   * `maxExtra` (when more) if other instances lease the bucket already (or
   * asked to join it), so that a key hot across the fleet is leased from an
   * instance's first calls.
   */
  readonly joinExtra?: number;
  /**
   * With `joinExtra`: whether this call counts the instance in the bucket's
   * fleet (default true). False for a key's first sighting: a key seen once
   * leaves nothing in Redis but its bucket.
   */
  readonly joinCounts?: boolean;
  /**
   * With {@link LeaseRequest.fleet}: this instance's demand for the bucket
   * over its rate (tokens asked per second / rate), summed over the fleet
   * in {@link LeaseResult.loads}: how an instance sizes its share.
   */
  readonly weight?: number;
  /**
   * With {@link LeaseRequest.fleet}: the bucket's epoch as last answered
   * ({@link LeaseResult.epochs}). Told one while the bucket's fleet set has
   * none, the script takes the bucket's state as lost (a restart or
   * failover) and the bucket as empty.
   */
  readonly epoch?: string;
  /**
   * With {@link LeaseRequest.fleet}: a pace asked for the bucket (issue 29,
   * `scripts/pace.lua.ts`): up to `ask` tokens per second, for as long as
   * it takes to bring `tokens`, charged to the bucket at once and spent as
   * they come due, within the share of the fleet's load that `weight` gives.
   * Replaces this instance's last pace on the bucket (its part not yet due is
   * given back). Answered in {@link LeaseResult.paces}.
   */
  readonly pace?: PaceAsk;
}

/** A pace asked (see {@link LeaseCheck.pace}). */
export interface PaceAsk {
  /** Tokens per second wanted (this instance's demand); 0 ends this instance's pace. */
  readonly ask: number;
  /** Tokens the pace brings: it lasts `tokens / rate`, within [`minMs`, `maxMs`]. */
  readonly tokens: number;
  readonly minMs: number;
  readonly maxMs: number;
  /**
   * Longest pace while its share is unsure: the fleet's load (estimated,
   * `scripts/pace.lua.ts`) under the rate, or no other instance counted.
   */
  readonly sureMs: number;
  /** The instances configured to share the bucket (the `instances` option). */
  readonly instances: number;
  /** Tokens this instance held and gives back to the bucket in the same call. */
  readonly giveBack?: number;
  /** The pace this instance held until this call (rate, and how long it lasted): 0 for none. */
  readonly held?: number;
  readonly heldMs?: number;
  /**
   * Tokens this instance saved of its paces and carries into the one asked
   * (it keeps no more than that one's cap): what the bucket is kept below
   * full by for this pace when granted. Omitted: the whole cap.
   */
  readonly saved?: number;
  /**
   * How long this instance keeps the bucket's tokens it takes at once with
   * the pace before it gives back what is left of them (`two-tier/pace.ts`,
   * `LUMP_LEASE_TTLS`): it takes no more than its demand (`ask`) spends in
   * that time. Sent with `saved` only; omitted, no such bound.
   */
  readonly lumpMs?: number;
}

/** What `RedisStore.lease` is asked. */
export interface LeaseRequest {
  readonly checks: readonly LeaseCheck[];
  /** As {@link ConsumeRequest.now}. */
  readonly now: number;
  /**
   * Count the instances leasing each bucket asked with `maxExtra > 0`, or
   * granted its `joinExtra` (a
   * sorted set beside it, in the same script call): this instance's `id`,
   * and how long (ms) an instance counts after its last lease call.
   * Answered in {@link LeaseResult.instances}. Ignored (no count) when the
   * checks span several Cluster slots.
   */
  readonly fleet?: { readonly id: string; readonly windowMs: number };
}

/** What `RedisStore.lease` answers. */
export interface LeaseResult extends ConsumeResult {
  /**
   * Per check, the extra whole tokens taken from its bucket beyond the cost
   * (all 0 when the request is denied). The decisions are those of a plain
   * consume: the bucket after the cost, before the extras.
   */
  readonly extras: readonly number[];
  /**
   * With {@link LeaseRequest.fleet}: per check, the instances (this one
   * included) that asked its bucket for a lease within the window; 0 for a
   * check asking no extra. Absent without a fleet count.
   */
  readonly instances?: readonly number[];
  /** With {@link LeaseRequest.fleet}: per check, its bucket's epoch ('' for none). */
  readonly epochs?: readonly string[];
  /** With {@link LeaseRequest.fleet}: per check, the sum of the counted instances' `weight` (0 when not counted). */
  readonly loads?: readonly number[];
  /** With {@link LeaseRequest.fleet}: per check, the pace granted (tokens per second; 0 for none). */
  readonly paces?: readonly number[];
  /**
   * With {@link LeaseRequest.fleet}: per check, how long the pace granted
   * lasts (ms); with none granted, how long until another instance's pace
   * ends (when a share may free up), or 0.
   */
  readonly paceMs?: readonly number[];
  /** With {@link LeaseRequest.fleet}: per check, the bucket's own whole tokens granted at once with the pace. */
  readonly paceLumps?: readonly number[];
  /**
   * With {@link LeaseRequest.fleet}: per check, the tokens this instance may
   * save of the pace granted (its due tokens unspent): Redis keeps the bucket
   * that far below full while they may be held, so that no window admits
   * more than one bucket would.
   */
  readonly paceSavings?: readonly number[];
}
