import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { RateLimitClock } from '../../clock.js';
import type { ResolvedModuleOptions } from '../../interfaces/resolved-module-options.interface.js';
import { rateLimitChannels } from '../../observability/rate-limit-channels.js';
import { RATE_LIMIT_CLOCK, RESOLVED_RATE_LIMIT_OPTIONS } from '../../rate-limit.constants.js';
import type { ResolvedConcurrencyLimit } from '../resolve-concurrency-limit.js';
import { AdaptiveConcurrency, type AdaptiveKeySnapshot } from './adaptive-concurrency.js';

/** What `RateLimiter.concurrencyLimit` answers: one key of an adaptive limit now. @publicApi */
export interface ConcurrencyLimitState {
  /** The limit's name. */
  readonly name: string;
  /** The key as the limit counts it (namespace and the caller's identity: personal data, as a bucket key). */
  readonly key: string;
  /** Calls allowed in flight now. */
  readonly limit: number;
  readonly inFlight: number;
  /** Callers waiting in the backlog. */
  readonly queued: number;
  /** The no-load latency the limit measures against (milliseconds); undefined before its first window. */
  readonly noLoadRttMs: number | undefined;
}

/**
 * The module's adaptive `concurrency` limits, one limiter per limit
 * namespace (a `scope: 'shared'` limit is one limiter for all its routes),
 * created on first use. Publishes each limit change on the
 * `concurrency-limit-change` channel (events, metrics).
 *
 * @internal
 */
@Injectable()
export class AdaptiveConcurrencyLimits implements OnModuleDestroy {
  private readonly limiters = new Map<string, { name: string; limiter: AdaptiveConcurrency }>();
  private readonly unknownPartitions = new Set<string>();

  constructor(
    @Inject(RATE_LIMIT_CLOCK) private readonly clock: RateLimitClock,
    @Inject(RESOLVED_RATE_LIMIT_OPTIONS) private readonly options: ResolvedModuleOptions,
  ) {}

  /** The limiter of an adaptive limit (`limit.adaptive` set). */
  limiter(limit: ResolvedConcurrencyLimit): AdaptiveConcurrency {
    const found = this.limiters.get(limit.namespace);
    if (found !== undefined) return found.limiter;
    const { name } = limit;
    const owner = this.options.owner;
    const limiter = new AdaptiveConcurrency(limit.adaptive!.config, this.clock, (change) => {
      if (rateLimitChannels.concurrencyLimitChange.hasSubscribers)
        rateLimitChannels.concurrencyLimitChange.publish({ name, ...change, owner });
    });
    this.limiters.set(limit.namespace, { name, limiter });
    return limiter;
  }

  /** A call whose `partition` answered a name not declared: the last partition, said once per limit. */
  unknownPartition(limit: ResolvedConcurrencyLimit, answered: unknown): number {
    const names = limit.adaptive!.partitionNames;
    if (!this.unknownPartitions.has(limit.namespace)) {
      this.unknownPartitions.add(limit.namespace);
      const said = typeof answered === 'string' ? JSON.stringify(answered) : typeof answered;
      this.options.warn(
        `RateLimit: limit "${limit.name}": concurrency.partition answered ${said}, not one of ${names.join(', ')}; such calls go to the last partition ("${names.at(-1)}"). Said once per limit.`,
      );
    }
    return names.length - 1;
  }

  /** The adaptive limit `name` now: every key kept, or only those whose identity is `key`. */
  current(name: string, key?: string): ConcurrencyLimitState[] {
    const states: ConcurrencyLimitState[] = [];
    for (const [namespace, entry] of this.limiters) {
      if (entry.name !== name) continue;
      const snapshots: (AdaptiveKeySnapshot | undefined)[] =
        key === undefined ? entry.limiter.snapshots() : [entry.limiter.snapshot(namespace + key)];
      for (const snapshot of snapshots)
        if (snapshot !== undefined) states.push({ name, ...snapshot });
    }
    return states;
  }

  /** Shutdown: waiting callers refused at once, their timers cancelled. */
  onModuleDestroy(): void {
    for (const { limiter } of this.limiters.values()) limiter.close();
  }
}
