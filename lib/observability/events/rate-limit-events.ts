import {
  Inject,
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { optionError } from '../../errors/option-error.js';
import { RESOLVED_RATE_LIMIT_OPTIONS } from '../../rate-limit.constants.js';
import type { ResolvedModuleOptions } from '../../interfaces/resolved-module-options.interface.js';
import { loadPeer } from '../metrics/load-peer.js';
import type { RateLimitOwner } from '../../interfaces/rate-limit-owner.interface.js';
import { CHANNEL_TRANSLATIONS, type ChannelTranslation, type Emit } from './channel-translation.js';
import {
  RATE_LIMIT_EVENT_TYPES,
  type RateLimitEventListener,
  type RateLimitEventMap,
  type RateLimitEventType,
} from './rate-limit-events.interface.js';

type AnyListener = (event: unknown) => unknown;

/** The part of `EventEmitter2` used: `emitAsync` when it has it, so a failing async listener is contained too. */
interface EventEmitterLike {
  emit(event: string, ...values: unknown[]): unknown;
  emitAsync?(event: string, ...values: unknown[]): Promise<unknown>;
}

/**
 * The module's events, for application code: denials, shadow denials, store
 * failures and recoveries, the local fallback's switches, adaptive rate
 * changes and penalties (see {@link RateLimitEventMap}).
 *
 * ```ts
 * constructor(events: RateLimitEvents) {
 *   events.on('denied', (event) => this.audit.write(event.route, event.verdicts[0]!.limit));
 * }
 * ```
 *
 * - **Scoped** to its module instance: the diagnostics channels it reads are
 *   process-wide, so it drops the messages another application published
 *   (every message carries its module's `owner`).
 * - **Free until used**: it subscribes to a channel only while an event that
 *   channel makes has a listener (or `events.eventEmitter` forwards them).
 * - **Never in a request's way**: events are delivered after the current
 *   turn of the event loop (`setImmediate`), in order, never awaited; what a
 *   listener throws or rejects with is caught and logged once per listener.
 *
 * @publicApi
 */
@Injectable()
export class RateLimitEvents implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('RateLimit');
  private readonly listeners = new Map<RateLimitEventType, Set<AnyListener>>();
  /** The channels subscribed to now, with their handlers. */
  private readonly subscribed = new Map<ChannelTranslation, (message: unknown) => void>();
  /** Listeners whose failure was logged already. */
  private readonly reported = new WeakSet<AnyListener>();
  private queue: [RateLimitEventType, unknown][] = [];
  private flushing: ReturnType<typeof setImmediate> | undefined;
  private forward: AnyListener | undefined;
  private destroyed = false;
  private readonly owner: RateLimitOwner;
  private readonly emit: Emit = (type, event) => this.enqueue(type, event);

  constructor(
    @Inject(RESOLVED_RATE_LIMIT_OPTIONS)
    private readonly options: Pick<ResolvedModuleOptions, 'owner' | 'events'>,
    private readonly moduleRef: ModuleRef,
  ) {
    this.owner = options.owner;
  }

  /**
   * Listen to one type of event. The listener runs after the request that
   * caused it went on; it may be async. Returns the function that removes it.
   */
  on<T extends RateLimitEventType>(type: T, listener: RateLimitEventListener<T>): () => void {
    if (!RATE_LIMIT_EVENT_TYPES.includes(type)) {
      throw new TypeError(
        `RateLimitEvents.on: unknown event type ${JSON.stringify(type)} (known: ${RATE_LIMIT_EVENT_TYPES.join(', ')})`,
      );
    }
    if (typeof listener !== 'function')
      throw new TypeError('RateLimitEvents.on: the listener must be a function');
    let set = this.listeners.get(type);
    if (set === undefined) this.listeners.set(type, (set = new Set()));
    const added = listener as AnyListener;
    set.add(added);
    this.sync();
    return () => {
      set.delete(added);
      this.sync();
    };
  }

  /** With `events: { eventEmitter: true }`: finds `EventEmitter2` (loading the peer), or fails the bootstrap. */
  async onModuleInit(): Promise<void> {
    if (!this.options.events.eventEmitter) return;
    const { EventEmitter2 } = await loadPeer(
      'events.eventEmitter',
      '@nestjs/event-emitter',
      () => import('@nestjs/event-emitter'),
    );
    let emitter: EventEmitterLike | undefined;
    try {
      emitter = this.moduleRef.get<EventEmitterLike>(EventEmitter2, { strict: false });
    } catch {
      emitter = undefined;
    }
    if (emitter === undefined || emitter === null) {
      throw optionError(
        'RateLimitModule',
        'events.eventEmitter',
        'found no EventEmitter2 provider: import EventEmitterModule.forRoot() from @nestjs/event-emitter in the application module',
      );
    }
    const forward = (type: RateLimitEventType, event: unknown): unknown =>
      emitter.emitAsync
        ? emitter.emitAsync(`rate-limit.${type}`, event)
        : emitter.emit(`rate-limit.${type}`, event);
    this.forward = forward as AnyListener;
    this.sync();
  }

  /** Unsubscribes everything; events not yet delivered are dropped. */
  onModuleDestroy(): void {
    this.destroyed = true;
    this.listeners.clear();
    this.forward = undefined;
    this.sync();
    this.queue = [];
    if (this.flushing !== undefined) clearImmediate(this.flushing);
    this.flushing = undefined;
  }

  /** Subscribes to the channels some listener needs, and only those (no publisher pays for the others). */
  private sync(): void {
    for (const translation of CHANNEL_TRANSLATIONS) {
      const needed =
        !this.destroyed &&
        (this.forward !== undefined ||
          translation.types.some((type) => (this.listeners.get(type)?.size ?? 0) > 0));
      const handler = this.subscribed.get(translation);
      if (needed && handler === undefined) {
        const subscribe = (message: unknown) => this.receive(translation, message);
        translation.channel.subscribe(subscribe);
        this.subscribed.set(translation, subscribe);
      } else if (!needed && handler !== undefined) {
        translation.channel.unsubscribe(handler);
        this.subscribed.delete(translation);
      }
    }
  }

  /**
   * Runs inside the publisher (a request): only this module's messages, and
   * nothing may escape (diagnostics_channel would rethrow it as an uncaught exception).
   */
  private receive(translation: ChannelTranslation, message: unknown): void {
    if ((message as { owner?: RateLimitOwner } | null)?.owner !== this.owner) return;
    try {
      translation.translate(message, this.emit);
    } catch (error) {
      this.report(this.receive as AnyListener, 'channel message', error);
    }
  }

  private enqueue(type: RateLimitEventType, event: unknown): void {
    if (this.forward === undefined && (this.listeners.get(type)?.size ?? 0) === 0) return;
    this.queue.push([type, event]);
    this.flushing ??= setImmediate(() => this.flush());
  }

  /** Delivers what was queued, each listener on its own: one failing stops no other. */
  private flush(): void {
    this.flushing = undefined;
    const queue = this.queue;
    this.queue = [];
    for (const [type, event] of queue) {
      for (const listener of this.listeners.get(type) ?? []) this.call(listener, type, event);
      if (this.forward !== undefined) this.call(this.forward, type, event, true);
    }
  }

  private call(
    listener: AnyListener,
    type: RateLimitEventType,
    event: unknown,
    forwarding = false,
  ): void {
    const what = forwarding ? `EventEmitter2 listener of rate-limit.${type}` : `'${type}' listener`;
    try {
      const result = forwarding
        ? (listener as (type: RateLimitEventType, event: unknown) => unknown)(type, event)
        : listener(event);
      if (isThenable(result))
        result.then(undefined, (error: unknown) => this.report(listener, what, error));
    } catch (error) {
      this.report(listener, what, error);
    }
  }

  /** Said once per listener: a listener failing on every event must not flood the log. */
  private report(listener: AnyListener, what: string, error: unknown): void {
    if (this.reported.has(listener)) return;
    this.reported.add(listener);
    const why = error instanceof Error ? error.message : String(error);
    this.logger.error(
      `RateLimitEvents: a ${what} failed (${why}); the request was not affected. Its later failures are not logged.`,
    );
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}
