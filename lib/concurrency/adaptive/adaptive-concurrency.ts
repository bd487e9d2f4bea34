import { realTimer, type ClockTimer, type RateLimitClock } from '../../clock.js';
import {
  initialGradientState,
  sampleGradient,
  type GradientLimitOptions,
  type GradientLimitState,
} from './gradient-limit.js';
import { admits } from './partition-admission.js';
import type { ConcurrencyLimitChange } from './concurrency-limit-change.interface.js';

/** What an adaptive `concurrency` limit resolves to (validated at start-up). */
export interface AdaptiveConcurrencyConfig {
  readonly controller: GradientLimitOptions;
  /** Partition names and shares, in priority order (first = most important); empty: none. */
  readonly partitions: readonly { readonly name: string; readonly share: number }[];
  /** Callers held for a slot: at most `size`, each at most `timeoutMs`; undefined: refused at once. */
  readonly backlog: { readonly size: number; readonly timeoutMs: number } | undefined;
}

/** A partition's guarantee stays reserved this long after its last caller (milliseconds). */
export const PARTITION_ACTIVE_MS = 1000;
/** Keys one adaptive limit keeps a controller for; idle ones are forgotten first beyond it. */
export const MAX_ADAPTIVE_KEYS = 10_000;
/** A refused caller may retry in a second (slots come back when calls end). */
export const ADAPTIVE_RETRY_AFTER_MS = 1000;

/** A slot taken: given back exactly once, saying whether the call failed. */
export interface AdaptiveTicket {
  release(failed: boolean): void;
}

export type AdaptiveAnswer =
  | {
      readonly allowed: true;
      readonly ticket: AdaptiveTicket;
      readonly limit: number;
      readonly inFlight: number;
    }
  | {
      readonly allowed: false;
      readonly limit: number;
      readonly inFlight: number;
      readonly retryAfterMs: number;
      /** Why: the limit (no backlog, or backlog full) or the wait ran out; 'gone' when the caller left while waiting. */
      readonly reason: 'limit' | 'timeout' | 'gone';
    };

/** Notice that the caller left: the listener is called once, the function returned stops watching. */
export type WatchGone = (listener: () => void) => () => void;

interface Waiter {
  readonly partition: number;
  readonly settle: (answer: AdaptiveAnswer) => void;
  timer: ClockTimer | undefined;
  stopWatching: (() => void) | undefined;
}

interface KeyState {
  controller: GradientLimitState;
  inFlight: number;
  readonly byPartition: number[];
  readonly lastSeen: number[];
  /** LIFO: the newest at the end. */
  readonly backlog: Waiter[];
}

/** What one key shows (RateLimiter, metrics). */
export interface AdaptiveKeySnapshot {
  readonly key: string;
  readonly limit: number;
  readonly inFlight: number;
  readonly queued: number;
  readonly noLoadRttMs: number | undefined;
}

/**
 * One adaptive `concurrency` limit in one process: per key, the calls in
 * flight (per partition), the controller's state and the backlog. Slots are
 * counted here, never in the store: the limit is each instance's own share
 * of the downstream (docs/concurrency.md). Time only from the clock; the
 * only timers are the backlog's waits (the clock's, else unref'd).
 *
 * @internal
 */
export class AdaptiveConcurrency {
  private readonly keys = new Map<string, KeyState>();

  constructor(
    readonly config: AdaptiveConcurrencyConfig,
    private readonly clock: RateLimitClock,
    private readonly onChange: (change: ConcurrencyLimitChange) => void = () => undefined,
  ) {}

  /**
   * Take a slot of `key` for a call of `partition` (its index; 0 without
   * partitions): at once, refused at once, or (with a backlog) a promise
   * settled when a slot frees, the wait runs out, or `watch` says the caller
   * left (then nothing was taken).
   */
  acquire(
    key: string,
    partition: number,
    watch?: WatchGone,
  ): AdaptiveAnswer | Promise<AdaptiveAnswer> {
    // Settled before `request` returns: the caller had already left.
    let early: AdaptiveAnswer | undefined;
    let later = (answer: AdaptiveAnswer): void => void (early = answer);
    const answer = this.request(key, partition, watch, (settled) => later(settled));
    return answer ?? early ?? new Promise<AdaptiveAnswer>((resolve) => (later = resolve));
  }

  /**
   * {@link acquire} with a callback: the answer now, or undefined and
   * `settle` called (synchronously, from the release or the timer) once the
   * backlog decides. What a discrete-event simulation drives.
   */
  request(
    key: string,
    partition: number,
    watch: WatchGone | undefined,
    settle: (answer: AdaptiveAnswer) => void,
  ): AdaptiveAnswer | undefined {
    const state = this.state(key);
    const now = this.clock.now();
    if (state.lastSeen.length > 0) state.lastSeen[partition] = now;
    if (this.admits(state, partition, now)) return this.take(key, state, partition, now);
    const { backlog } = this.config;
    if (backlog === undefined || state.backlog.length >= backlog.size)
      return this.refused(state, 'limit');
    const waiter: Waiter = { partition, settle, timer: undefined, stopWatching: undefined };
    const leave = (reason: 'timeout' | 'gone'): void => {
      const at = state.backlog.indexOf(waiter);
      if (at < 0) return;
      state.backlog.splice(at, 1);
      this.forget(waiter);
      settle(this.refused(state, reason));
    };
    state.backlog.push(waiter);
    const setTimer = this.clock.setTimer?.bind(this.clock) ?? realTimer;
    waiter.timer = setTimer(backlog.timeoutMs, () => leave('timeout'));
    waiter.stopWatching = watch?.(() => leave('gone'));
    return undefined;
  }

  /** The key's limit, in-flight count and backlog now; undefined for a key never seen (or forgotten). */
  snapshot(key: string): AdaptiveKeySnapshot | undefined {
    const state = this.keys.get(key);
    return state && this.describe(key, state);
  }

  /** Every key kept. */
  snapshots(): AdaptiveKeySnapshot[] {
    return [...this.keys].map(([key, state]) => this.describe(key, state));
  }

  /** Module shutdown: every waiter refused at once, its timer cancelled. */
  close(): void {
    for (const state of this.keys.values()) {
      for (const waiter of state.backlog.splice(0)) {
        this.forget(waiter);
        waiter.settle(this.refused(state, 'limit'));
      }
    }
  }

  private describe(key: string, state: KeyState): AdaptiveKeySnapshot {
    return {
      key,
      limit: state.controller.limit,
      inFlight: state.inFlight,
      queued: state.backlog.length,
      noLoadRttMs: state.controller.noLoadRtt,
    };
  }

  private state(key: string): KeyState {
    let state = this.keys.get(key);
    if (state !== undefined) return state;
    if (this.keys.size >= MAX_ADAPTIVE_KEYS) this.evictIdle();
    const partitions = this.config.partitions.length;
    state = {
      controller: initialGradientState(this.config.controller, this.clock.now()),
      inFlight: 0,
      byPartition: new Array<number>(partitions).fill(0),
      lastSeen: new Array<number>(partitions).fill(-Infinity),
      backlog: [],
    };
    this.keys.set(key, state);
    return state;
  }

  /** Forget the oldest idle key (no call in flight, none waiting). A busy key holds a call, so busy keys are bounded by the calls. */
  private evictIdle(): void {
    for (const [key, state] of this.keys) {
      if (state.inFlight === 0 && state.backlog.length === 0) {
        this.keys.delete(key);
        return;
      }
    }
  }

  private admits(state: KeyState, partition: number, now: number): boolean {
    return admits(
      {
        limit: state.controller.limit,
        inFlight: state.inFlight,
        byPartition: state.byPartition,
        shares: this.config.partitions.map((p) => p.share),
        active: state.lastSeen.map((seen) => now - seen < PARTITION_ACTIVE_MS),
      },
      partition,
    );
  }

  private take(key: string, state: KeyState, partition: number, now: number): AdaptiveAnswer {
    state.inFlight++;
    if (state.byPartition.length > 0) state.byPartition[partition]!++;
    const startedAt = now;
    const inFlight = state.inFlight;
    let released = false;
    const ticket: AdaptiveTicket = {
      release: (failed) => {
        if (released) return;
        released = true;
        state.inFlight--;
        if (state.byPartition.length > 0) state.byPartition[partition]!--;
        this.sample(key, state, { startedAt, endedAt: this.clock.now(), inFlight, failed });
        this.drain(key, state);
      },
    };
    return { allowed: true, ticket, limit: state.controller.limit, inFlight };
  }

  private sample(key: string, state: KeyState, sample: Parameters<typeof sampleGradient>[1]): void {
    const from = state.controller.limit;
    state.controller = sampleGradient(state.controller, sample, this.config.controller);
    const to = state.controller.limit;
    if (to !== from)
      this.onChange({
        key,
        from,
        to,
        inFlight: state.inFlight,
        queued: state.backlog.length,
        noLoadRttMs: state.controller.noLoadRtt,
      });
  }

  /** Slots free: the newest waiters first, each of a partition that may take one. */
  private drain(key: string, state: KeyState): void {
    const now = this.clock.now();
    for (let i = state.backlog.length - 1; i >= 0; i--) {
      const waiter = state.backlog[i]!;
      if (!this.admits(state, waiter.partition, now)) {
        if (state.inFlight >= state.controller.limit) return;
        continue;
      }
      state.backlog.splice(i, 1);
      this.forget(waiter);
      waiter.settle(this.take(key, state, waiter.partition, now));
    }
  }

  private forget(waiter: Waiter): void {
    waiter.timer?.cancel();
    waiter.stopWatching?.();
  }

  private refused(state: KeyState, reason: 'limit' | 'timeout' | 'gone'): AdaptiveAnswer {
    return {
      allowed: false,
      limit: state.controller.limit,
      inFlight: state.inFlight,
      retryAfterMs: ADAPTIVE_RETRY_AFTER_MS,
      reason,
    };
  }
}
