import { randomBytes } from 'node:crypto';
import { Inject, Injectable, type ExecutionContext, type OnModuleDestroy } from '@nestjs/common';
import { finalize, Observable, tap, type Subscription } from 'rxjs';
import type { FailMode } from '../interfaces/rate-limit-options.interface.js';
import { rateLimitChannels } from '../observability/rate-limit-channels.js';
import { RateLimitEngine } from '../engine/rate-limit-engine.js';
import type { ResolvedModuleOptions } from '../interfaces/resolved-module-options.interface.js';
import type { CompiledRoute } from '../routes/compiled-route.js';
import type { SlotAcquireResult } from '../store/concurrency-slots.interface.js';
import type { MaybePromise } from '../store/rate-limit-store.interface.js';
import type {
  RateLimitDenial,
  RequestResponse,
} from '../transports/rate-limit-transport.interface.js';
import { isPromiseLike } from '../util/maybe-promise.js';
import { StoreFailureLog } from '../store/store-failure-log.js';
import { openCall, type HeldSlots, type SlotAdmission } from '../rate-limit-call.js';
import type { ResolvedConcurrencyLimit } from './resolve-concurrency-limit.js';
import {
  holdingHeaders,
  onResponseClosed,
  publishSlotDecision,
  type Holding,
} from './slot-holding.js';
import { realTimer, type ClockTimer, type RateLimitClock } from '../clock.js';
import { SlotReleases } from './slot-releases.js';
import { SlotReleaseLog } from './slot-release-log.js';
import { callFailed, takeAdaptiveTicket, type TicketGate } from './adaptive/adaptive-tickets.js';
import { AdaptiveConcurrencyLimits } from './adaptive/adaptive-concurrency-limits.js';
import { RATE_LIMIT_CLOCK, RESOLVED_RATE_LIMIT_OPTIONS } from '../rate-limit.constants.js';
import { answerAdmitted, answerDenied } from '../transports/call-answer.js';

/** A refused request may retry in a second: slots come back when requests end, which no header can predict. */
const RETRY_AFTER_MS = 1000;

/**
 * `RateLimitInterceptor`'s side of `concurrency` limits: takes one slot per
 * limit for a call the guard admitted (in declaration order; one refused
 * gives back those taken and the call's rate tokens), runs the handler, and
 * releases every slot exactly once when its observable completes, errors or
 * is unsubscribed. The client going away does not end the handler, so it
 * does not release a slot whose handler runs: only a handler that never
 * ends loses its slot, at the end of its lease. An acquisition that failed
 * (timed out) is released with the call all the same, and a release that
 * fails is retried ({@link SlotReleases}). Synchronous with a synchronous
 * store (memory).
 *
 * One instance per module, shared by the guard (HTTP) and the interceptor
 * (other transports).
 *
 * @internal
 */
@Injectable()
export class SlotGate implements OnModuleDestroy {
  /** Slot ids: unique per process (random) and per acquisition (counter). */
  private readonly prefix = randomBytes(6).toString('base64url');
  private counter = 0;
  private readonly releaseFailures: SlotReleaseLog;
  /** Acquisitions that failed, said once per burst like the limiter's own store failures. */
  private readonly failures = new StoreFailureLog();
  /** Every release, retried while it fails. */
  private readonly releases: SlotReleases;
  /** Adaptive limits' slots: tickets of the process's limiters (`adaptive/adaptive-tickets.ts`). */
  private readonly tickets: TicketGate;

  constructor(
    private readonly engine: RateLimitEngine,
    @Inject(RESOLVED_RATE_LIMIT_OPTIONS) private readonly options: ResolvedModuleOptions,
    @Inject(RATE_LIMIT_CLOCK) private readonly clock: RateLimitClock,
    adaptive: AdaptiveConcurrencyLimits,
  ) {
    this.tickets = {
      limits: adaptive,
      refuse: (holding, retryAfterMs) => this.refuse(holding, retryAfterMs),
      giveBackAndThrow: (holding, error) => this.giveBackAndThrow(holding, error),
    };
    this.releaseFailures = new SlotReleaseLog(options.warn);
    this.releases = new SlotReleases(() => this.clock.now(), {
      failed: (error) => this.releaseFailures.failed(error),
      dropped: (count, why) => this.releaseFailures.dropped(count, why),
    });
  }

  /**
   * HTTP: the guard takes the call's slots, so that a refusal is a 429
   * whatever the handler is (a server-sent events route commits its 200 on
   * the next macrotask, before an asynchronous store could answer an
   * interceptor). Released by the interceptor's `finalize` once the handler
   * runs; before it runs, when the response closes (sent, or the client
   * gone): that covers a later guard that refuses the call.
   */
  takeInGuard(
    context: ExecutionContext,
    route: CompiledRoute,
    exchange: RequestResponse,
    admission: SlotAdmission,
    deny: (denial: RateLimitDenial) => never,
  ): MaybePromise<true> {
    const holding = this.holding(context, route, exchange, admission, deny);
    const taken = this.acquireFrom(holding, 0);
    if (isPromiseLike(taken)) return taken.then(() => this.heldByCall(holding));
    return this.heldByCall(holding);
  }

  private heldByCall(holding: Holding): true {
    this.announce(holding);
    if (holding.held.length === 0) return true;
    const slots = this.releaser(holding, onResponseClosed(holding.exchange.response));
    openCall(holding.context, holding.route).slots = slots;
    return true;
  }

  /** Other transports: the interceptor takes the call's slots after every guard, then `run`s the handler holding them. */
  hold(
    context: ExecutionContext,
    route: CompiledRoute,
    exchange: RequestResponse,
    admission: SlotAdmission,
    run: () => Observable<unknown>,
  ): Observable<unknown> {
    const deny = (denial: RateLimitDenial): never => {
      throw route.transport.denialError(denial, context);
    };
    const holding = this.holding(context, route, exchange, admission, deny);
    const taken = this.acquireFrom(holding, 0);
    if (!isPromiseLike(taken)) return this.admitted(holding, run);
    // An observable rather than a promise of one: a subscriber gone before the slots
    // are taken must give them back, which nothing would do for an observable handed
    // over too late to be subscribed.
    return new Observable<unknown>((subscriber) => {
      let closed = false;
      let inner: Subscription | undefined;
      taken.then(
        () => {
          if (closed) return this.releaseAll(holding);
          try {
            inner = this.admitted(holding, run).subscribe(subscriber);
          } catch (error) {
            subscriber.error(error);
          }
        },
        (error: unknown) => subscriber.error(error),
      );
      return () => {
        closed = true;
        inner?.unsubscribe();
      };
    });
  }

  private admitted(holding: Holding, run: () => Observable<unknown>): Observable<unknown> {
    this.announce(holding);
    if (holding.held.length === 0) return run();
    const watch = holding.route.transport.onClientGone?.bind(
      holding.route.transport,
      holding.exchange,
    );
    const release = this.releaser(holding, watch).handlerStarted();
    let error: unknown;
    return run().pipe(
      tap({ error: (thrown: unknown) => void (error = thrown ?? new Error('handler failed')) }),
      finalize(() => release(callFailed(error))),
    );
  }

  private holding(
    context: ExecutionContext,
    route: CompiledRoute,
    exchange: RequestResponse,
    admission: SlotAdmission,
    deny: (denial: RateLimitDenial) => never,
  ): Holding {
    const slots = this.options.store.slots!;
    return {
      context,
      route,
      exchange,
      admission,
      slots,
      held: [],
      keys: [],
      limits: [],
      decisions: [],
      failedOpen: false,
      deny,
    };
  }

  /** Every slot taken: published, and the headers written (the slots given back if they cannot be). */
  private announce(holding: Holding): void {
    publishSlotDecision(
      holding.route,
      this.options.owner,
      holding.failedOpen ? 'fail-open' : 'admitted',
      holding,
    );
    const source = holdingHeaders(holding);
    try {
      // Nothing decided (no rate limit, and the slot store failed open): nothing to report.
      if (source.limits.length > 0)
        answerAdmitted(
          holding.route.transport,
          holding.exchange.response,
          this.options.headers,
          source,
        );
    } catch (error) {
      this.releaseAll(holding);
      throw error;
    }
  }

  /**
   * The one release of a call's slots. Before the handler starts, `watch`
   * (the response closed, sent or not) releases them at once: nothing else
   * would (a later guard refused the call). Once the handler runs
   * (`handlerStarted`), only its end releases them (the interceptor's
   * `finalize`), or, after the client has gone, the end of the longest lease
   * among them, counted from when they were taken: the moment the store
   * would free them by itself, for a handler that never ends.
   */
  private releaser(
    holding: Holding,
    watch: ((listener: () => void) => () => void) | undefined,
  ): HeldSlots {
    let released = false;
    let running = false;
    let stopWatching: (() => void) | undefined;
    let leaseEnd: ClockTimer | undefined;
    const takenAt = this.clock.now();
    const release = (failed = false): void => {
      if (released) return;
      released = true;
      stopWatching?.();
      leaseEnd?.cancel();
      this.releaseAll(holding, failed);
    };
    const gone = (): void => {
      if (!running) return release();
      if (released || leaseEnd !== undefined) return;
      let leaseMs = 0;
      for (const slot of holding.held) leaseMs = Math.max(leaseMs, slot.leaseMs);
      const setTimer = this.clock.setTimer?.bind(this.clock) ?? realTimer;
      leaseEnd = setTimer(takenAt + leaseMs - this.clock.now(), () => release(true));
    };
    stopWatching = watch?.(gone);
    return {
      handlerStarted: () => {
        running = true;
        return release;
      },
    };
  }

  /** Limits `from` on, in order; answers once every slot is taken (or its failure admitted). */
  private acquireFrom(holding: Holding, from: number): MaybePromise<void> {
    const limits = holding.route.concurrency;
    for (let i = from; i < limits.length; i++) {
      const step = this.acquireOne(holding, limits[i]!);
      if (isPromiseLike(step)) return step.then(() => this.acquireFrom(holding, i + 1));
    }
  }

  private acquireOne(holding: Holding, limit: ResolvedConcurrencyLimit): MaybePromise<void> {
    let identity: MaybePromise<string>;
    try {
      identity = limit.identify(holding.context, holding.exchange.request);
    } catch (error) {
      return this.giveBackAndThrow(holding, error);
    }
    if (isPromiseLike(identity)) {
      return identity.then(
        (resolved) => this.acquireKey(holding, limit, limit.namespace + resolved),
        (error: unknown) => this.giveBackAndThrow(holding, error),
      );
    }
    return this.acquireKey(holding, limit, limit.namespace + identity);
  }

  private acquireKey(
    holding: Holding,
    limit: ResolvedConcurrencyLimit,
    key: string,
  ): MaybePromise<void> {
    if (limit.adaptive !== undefined) return takeAdaptiveTicket(this.tickets, holding, limit, key);
    const id = `${this.prefix}:${(this.counter = (this.counter + 1) % Number.MAX_SAFE_INTEGER)}`;
    let answer: MaybePromise<SlotAcquireResult>;
    try {
      answer = holding.slots.acquire({
        key,
        limit: limit.concurrency,
        id,
        leaseMs: limit.leaseMs,
        now: this.clock.now(),
      });
    } catch (error) {
      return this.failed(holding, limit, error);
    }
    if (!isPromiseLike(answer)) return this.decided(holding, limit, key, id, answer);
    return answer.then(
      (result) => this.decided(holding, limit, key, id, result),
      (error: unknown) => {
        // No answer is not no slot: a Redis that stalled past the timeout runs the
        // acquisition when it wakes. Released with the call like a slot taken.
        holding.held.push({ key, id, leaseMs: limit.leaseMs });
        return this.failed(holding, limit, error);
      },
    );
  }

  private decided(
    holding: Holding,
    limit: ResolvedConcurrencyLimit,
    key: string,
    id: string,
    result: SlotAcquireResult,
  ): void {
    this.failures.succeeded();
    const free = Math.max(0, limit.concurrency - result.inFlight);
    holding.limits.push(limit.header);
    holding.keys.push({ key, limit: limit.shape });
    if (result.allowed) {
      holding.held.push({ key, id, leaseMs: limit.leaseMs });
      holding.decisions.push({ allowed: true, remaining: free, retryAfterMs: 0, resetMs: 0 });
      return;
    }
    this.refuse(holding, RETRY_AFTER_MS);
  }

  /** The call refused by its last limit: what it took goes back, the denial is published and answered. */
  private refuse(holding: Holding, retryAfterMs: number): never {
    holding.decisions.push({
      allowed: false,
      remaining: 0,
      retryAfterMs,
      resetMs: 0,
      reason: 'limit',
    });
    this.giveBack(holding);
    publishSlotDecision(holding.route, this.options.owner, 'denied', holding);
    const source = holdingHeaders(holding);
    const { transport } = holding.route;
    holding.deny(answerDenied(transport, holding.exchange.response, this.options.headers, source));
  }

  /** The store failed: the limit's fail mode decides (`'local'` admits like `'open'`: slots have no local tier). */
  private failed(holding: Holding, limit: ResolvedConcurrencyLimit, error: unknown): void {
    const failMode: FailMode = limit.failMode ?? this.options.failMode;
    const consecutiveFailures = this.failures.failed(error);
    if (rateLimitChannels.storeFailure.hasSubscribers)
      rateLimitChannels.storeFailure.publish({
        error,
        failMode,
        owner: this.options.owner,
        consecutiveFailures,
      });
    if (failMode !== 'closed') {
      holding.failedOpen = true;
      return;
    }
    this.giveBack(holding);
    publishSlotDecision(holding.route, this.options.owner, 'fail-closed', undefined);
    throw holding.route.transport.unavailableError(holding.context);
  }

  private giveBackAndThrow(holding: Holding, error: unknown): never {
    this.giveBack(holding);
    throw error;
  }

  /** A refused call: the slots taken so far and the rate tokens charged go back. */
  private giveBack(holding: Holding): void {
    this.releaseAll(holding);
    if (holding.admission.charged.length > 0) this.engine.refundCharged(holding.admission.charged);
  }

  /** Never throws, never leaves a rejection unhandled: a failed release is retried, and said once per burst. */
  private releaseAll(holding: Holding, failed = false): void {
    for (const { key, id, leaseMs, ticket } of holding.held.splice(0)) {
      if (ticket !== undefined) ticket.release(failed);
      else this.releases.release(holding.slots, key, id, leaseMs);
    }
  }

  /** Module shutdown: pending retries dropped (left to their leases), the release failures counted are said. */
  onModuleDestroy(): void {
    this.releases.close();
    this.releaseFailures.flush();
    this.failures.close();
  }
}
