import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { BucketLimit } from '../algorithms/gcra.js';
import { systemClock, type RateLimitClock } from '../clock.js';
import { rateLimitChannels } from '../observability/rate-limit-channels.js';
import type { RateLimitOwner } from '../interfaces/rate-limit-owner.interface.js';
import { RATE_LIMIT_CLOCK, RATE_LIMIT_OWNER } from '../rate-limit.constants.js';
import { AdaptiveController } from './adaptive-controller.js';
import type { AdaptiveHandlerResult } from '../interfaces/adaptive-options.interface.js';
import type { AdaptiveOutcome } from './adaptive-outcome.js';
import type { AdaptiveRateChange, AdaptiveRateListener } from './adaptive-rate-change.interface.js';
import { adaptiveConfigDifference, type AdaptiveConfig } from './resolve-adaptive-options.js';

/**
 * Holds the effective rate of every adaptive limit and moves it with AIMD
 * from the outcomes it is told about.
 *
 * - The guard reads {@link effectiveLimit} before each decision (cheap: a map
 *   lookup and a time comparison, the same object until the rate changes).
 * - The interceptor, and application code, call {@link report}.
 * - Windows are closed lazily by those calls, with time from the module clock
 *   (`RATE_LIMIT_CLOCK`): no timer, nothing to shut down.
 * - Each process adapts on its own outcomes, like TCP: see `docs/adaptive.md`
 *   for what that means for a fleet.
 *
 * Changes of at least a limit's `notifyThreshold` are logged (context
 * `RateLimit`; decreases as warnings), sent to {@link onRateChange} listeners
 * and published on the `nestjs-holdup:rate-change` diagnostics channel.
 *
 * @publicApi
 */
@Injectable()
export class AdaptiveRateProvider {
  private readonly logger = new Logger('RateLimit');
  private readonly controllers = new Map<string, AdaptiveController>();
  private readonly listeners = new Set<AdaptiveRateListener>();
  private readonly clock: RateLimitClock;
  private readonly notify = (change: AdaptiveRateChange): void => this.emit(change);

  constructor(
    @Optional() @Inject(RATE_LIMIT_CLOCK) clock?: RateLimitClock,
    /** The module instance whose limits these are: scopes the rate-change channel's messages. */
    @Optional() @Inject(RATE_LIMIT_OWNER) private readonly owner?: RateLimitOwner,
  ) {
    this.clock = clock ?? systemClock;
  }

  /**
   * Declare an adaptive limit, at start-up. Registering the same name again
   * with an equal configuration is a no-op (one effective rate, shared);
   * with a different one it throws, since two limits would silently fight over
   * one rate.
   *
   * @param name the name {@link report} and {@link current} use.
   * @param config from `resolveAdaptiveOptions(options, declared, where)`.
   * @param declared the limit's declared bucket (only `rate` and `burst` are
   *   read); optional, since `config.declared` already holds it, and checked
   *   against it when given.
   * @throws Error when `name` is already registered with another configuration,
   *   or when `declared` is not the bucket `config` was resolved for.
   */
  register(name: string, config: AdaptiveConfig, declared: BucketLimit = config.declared): void {
    if (declared.rate !== config.declared.rate || declared.burst !== config.declared.burst) {
      throw new Error(
        `Adaptive rate limit "${name}": declared ${declared.rate}/s burst ${declared.burst} does not match ` +
          `the bucket its adaptive options were resolved for (${describe(config)})`,
      );
    }
    const existing = this.controllers.get(name);
    if (existing !== undefined) {
      const difference = adaptiveConfigDifference(existing.config, config);
      if (difference === undefined) return;
      throw new Error(
        `Adaptive rate limit "${name}" is already registered with a different configuration ` +
          `(${difference}); give the limits different names`,
      );
    }
    this.controllers.set(name, new AdaptiveController(name, config, this.notify));
  }

  /** Whether `name` is a registered adaptive limit. */
  has(name: string): boolean {
    return this.controllers.has(name);
  }

  /** Names of the registered adaptive limits, in registration order. */
  names(): string[] {
    return [...this.controllers.keys()];
  }

  /**
   * The bucket to check now: effective rate (tokens/s) and burst (the declared
   * burst scaled with the rate, see `effectiveBucket`). Returns the same
   * frozen object until the rate changes.
   *
   * @throws Error for a name never registered (a wiring bug, not a request error).
   */
  effectiveLimit(name: string): BucketLimit {
    return this.get(name).effective(this.clock.now());
  }

  /**
   * Report the outcome of a request admitted under limit `name`: from the
   * interceptor (status, thrown errors, latency) or from application code
   * that knows better (`report('payments', 'failure')` when the payment
   * provider timed out behind a 200).
   *
   * @param key who the outcome is from, for the limit's `maxKeyShare` (one
   *   key's failures count for at most that share of a window's outcomes):
   *   the bucket key the limit charged, or any stable identity of the caller.
   *   Without it, the outcome counts in full.
   * @throws Error for a name never registered: a typo in application code
   *   must be loud, not a limit that silently never adapts.
   * @throws TypeError for a malformed outcome.
   */
  report(name: string, outcome: AdaptiveOutcome, key?: string): void {
    this.get(name).record(outcome, this.clock.now(), key);
  }

  /**
   * What `RateLimitInterceptor` reports: a handler's call, judged by the
   * limit's `adaptive.isServerFailure` (the transport's verdict without one).
   * One that throws is logged and the transport's verdict used: the
   * call's own answer never turns into an error because of it.
   *
   * @internal
   */
  reportResult(name: string, result: AdaptiveHandlerResult, key: string | undefined): void {
    const controller = this.get(name);
    const now = this.clock.now();
    try {
      controller.recordResult(result, now, key);
    } catch (error) {
      this.logger.error(
        `adaptive.isServerFailure of limit "${name}" threw; the transport's verdict is used`,
        error instanceof Error ? error.stack : String(error),
      );
      controller.record({ latencyMs: result.latencyMs, failed: result.failed }, now, key);
    }
  }

  /** The effective rate of `name` now, tokens/s; `undefined` for a name never registered. */
  current(name: string): number | undefined {
    return this.controllers.get(name)?.current(this.clock.now());
  }

  /**
   * Be told when a limit's rate moves by at least its `notifyThreshold`.
   * Listeners run synchronously inside the request that closed the window; an
   * error they throw is logged, never passed to that request.
   *
   * @returns a function that removes the listener.
   */
  onRateChange(listener: AdaptiveRateListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  private get(name: string): AdaptiveController {
    const controller = this.controllers.get(name);
    if (controller === undefined) {
      const known =
        this.controllers.size === 0
          ? 'none'
          : [...this.controllers.keys()].map((n) => `"${n}"`).join(', ');
      throw new Error(`Unknown adaptive rate limit "${name}" (registered: ${known})`);
    }
    return controller;
  }

  private emit(change: AdaptiveRateChange): void {
    if (rateLimitChannels.rateChange.hasSubscribers)
      rateLimitChannels.rateChange.publish({ ...change, owner: this.owner });
    const { window } = change;
    const percent =
      window.outcomes === 0 ? 0 : Math.round((100 * window.failures) / window.outcomes);
    const line =
      `Adaptive limit "${change.name}": rate ${round(change.previousRate)} -> ${round(change.rate)}/s ` +
      `(burst ${change.burst}) after ${window.failures}/${window.outcomes} bad outcomes (${percent}%)`;
    if (change.direction === 'decrease') this.logger.warn(line);
    else this.logger.log(line);

    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (error) {
        this.logger.error(
          `onRateChange listener failed for adaptive limit "${change.name}"`,
          error instanceof Error ? error.stack : String(error),
        );
      }
    }
  }
}

function round(rate: number): string {
  return rate >= 100 ? rate.toFixed(0) : rate >= 10 ? rate.toFixed(1) : rate.toPrecision(3);
}

function describe(config: AdaptiveConfig): string {
  const { declared } = config;
  return `${declared.rate}/s burst ${declared.burst}, adaptive min ${config.min} max ${config.max}`;
}
