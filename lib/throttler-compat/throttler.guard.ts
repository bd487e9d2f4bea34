import {
  Injectable,
  Logger,
  type CanActivate,
  type ExecutionContext,
  type OnModuleInit,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { createHash } from 'node:crypto';
import { DEFAULT_IPV6_SUBNET_PREFIX, normalizeIp } from './ip.js';
import {
  THROTTLER_BLOCK_DURATION,
  THROTTLER_KEY_GENERATOR,
  THROTTLER_LIMIT,
  THROTTLER_SKIP,
  THROTTLER_TRACKER,
  THROTTLER_TTL,
} from './throttler.constants.js';
import { InjectThrottlerOptions, InjectThrottlerStorage } from './throttler.decorator.js';
import { ThrottlerException, throttlerMessage } from './throttler.exception.js';
import type {
  Resolvable,
  ThrottlerGenerateKeyFunction,
  ThrottlerGetTrackerFunction,
  ThrottlerHeaders,
  ThrottlerLimitDetail,
  ThrottlerModuleOptions,
  ThrottlerOptions,
  ThrottlerRequest,
} from './throttler-module-options.interface.js';
import type { ThrottlerStorage, ThrottlerStorageRecord } from './throttler-storage.interface.js';
import { storeAnswerOf, type ThrottlerStorageService } from './throttler-storage.service.js';
import { checkThrottlers, compatOptions } from './compat-options.js';
import { HookDeadline, ThrottlerHookFailure } from './hook-deadline.js';
import { addDraftMember, draftPolicy, draftRateLimit } from './draft-headers.js';
import { hasNativeLimits, publishThrottlerDecision } from './native-bridge.js';
import { decisionsWatched } from '../observability/rate-limit-channels.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- throttler's hooks take and give untyped requests */

type CommonOptions = Pick<
  ThrottlerOptions,
  'skipIf' | 'ignoreUserAgents' | 'getTracker' | 'generateKey' | 'setHeaders'
>;

/**
 * `@nestjs/throttler` 6's guard, with every protected hook it has
 * (`getTracker`, `generateKey`, `shouldSkip`, `handleRequest`,
 * `getRequestResponse`, `throwThrottlingException`, `getErrorMessage`,
 * `setResponseHeader`), so that subclasses written for throttler keep
 * working. Counting is the storage's: by default `ThrottlerStorageService`,
 * on this library's store and window algorithm.
 */
@Injectable()
export class ThrottlerGuard implements CanActivate, OnModuleInit {
  protected headerPrefix = 'X-RateLimit';
  protected logger = new Logger(ThrottlerGuard.name);
  protected errorMessage = throttlerMessage;
  protected throttlers: ThrottlerOptions[] = [];
  protected commonOptions: CommonOptions = {};
  protected ipv6SubnetPrefix = DEFAULT_IPV6_SUBNET_PREFIX;
  /** The module's `headers` option (not in throttler). */
  private headerFormat: ThrottlerHeaders = 'throttler';
  /** Bounds the asynchronous hooks (not in throttler, which waits forever). */
  private hookDeadline = new HookDeadline();

  constructor(
    @InjectThrottlerOptions() protected readonly options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() protected readonly storageService: ThrottlerStorage,
    protected readonly reflector: Reflector,
  ) {}

  async onModuleInit(): Promise<void> {
    checkThrottlers((Array.isArray(this.options) ? this.options : this.options.throttlers) ?? []);
    // Shortest ttl first, as throttler orders them: the first denial stops the
    // loop, so the longer windows are not charged for a request denied sooner.
    this.throttlers = [...(Array.isArray(this.options) ? this.options : this.options.throttlers)]
      .sort((first, second) => {
        if (typeof first.ttl === 'function') return 1;
        if (typeof second.ttl === 'function') return 0;
        return first.ttl - second.ttl;
      })
      .map((opt) => ({ ...opt, name: opt.name ?? 'default' }));
    if (this.throttlers.length === 0)
      this.logger.warn(
        'No throttlers are configured, so no request is limited. Provide at least one entry to ThrottlerModule.forRoot() or return one from ThrottlerModule.forRootAsync().',
      );
    const compat = compatOptions(this.options);
    this.headerFormat = compat.headers;
    const clock = Array.isArray(this.options) ? undefined : this.options.clock;
    this.hookDeadline = new HookDeadline(clock, compat.failMode, this.logger);
    if (Array.isArray(this.options)) this.commonOptions = {};
    else {
      this.commonOptions = {
        skipIf: this.options.skipIf,
        ignoreUserAgents: this.options.ignoreUserAgents,
        getTracker: this.options.getTracker,
        generateKey: this.options.generateKey,
        setHeaders: this.options.setHeaders,
      };
      this.ipv6SubnetPrefix = this.options.ipv6SubnetPrefix ?? DEFAULT_IPV6_SUBNET_PREFIX;
    }
    this.commonOptions.getTracker ??= this.getTracker.bind(this);
    this.commonOptions.generateKey ??= this.generateKey.bind(this);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const handler = context.getHandler();
    const classRef = context.getClass();
    // A route with @RateLimit() is RateLimitModule's: one module limits a request, never both.
    if (hasNativeLimits(this.reflector, handler, classRef)) return true;
    if (await this.shouldSkip(context)) return true;
    const continues: boolean[] = [];
    for (const namedThrottler of this.throttlers) {
      const name = namedThrottler.name!;
      const targets = [handler, classRef];
      const skip = this.reflector.getAllAndOverride<boolean>(THROTTLER_SKIP + name, targets);
      const skipIf = namedThrottler.skipIf ?? this.commonOptions.skipIf;
      if (skip || skipIf?.(context)) {
        continues.push(true);
        continue;
      }
      try {
        continues.push(await this.throttle(context, namedThrottler, targets));
      } catch (error) {
        if (!(error instanceof ThrottlerHookFailure)) throw error;
        continues.push(this.hookDeadline.decide(error, name));
      }
    }
    return continues.every((cont) => cont);
  }

  /** One throttler's decision for the call (throttler's loop body). */
  private async throttle(
    context: ExecutionContext,
    namedThrottler: ThrottlerOptions,
    // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- what ExecutionContext gives
    targets: Function[],
  ): Promise<boolean> {
    const name = namedThrottler.name!;
    const read = <T>(key: string) => this.reflector.getAllAndOverride<T>(key + name, targets);
    const limit = this.toNumber(
      await this.resolveValue(
        context,
        read<Resolvable<number>>(THROTTLER_LIMIT) ?? namedThrottler.limit,
        'limit',
      ),
      'limit',
      name,
    );
    const ttl = this.toNumber(
      await this.resolveValue(
        context,
        read<Resolvable<number>>(THROTTLER_TTL) ?? namedThrottler.ttl,
        'ttl',
      ),
      'ttl',
      name,
    );
    const blockDuration = this.toNumber(
      await this.resolveValue(
        context,
        read<Resolvable<number>>(THROTTLER_BLOCK_DURATION) ?? namedThrottler.blockDuration ?? ttl,
        'blockDuration',
      ),
      'blockDuration',
      name,
    );
    const getTracker =
      read<ThrottlerGetTrackerFunction>(THROTTLER_TRACKER) ??
      namedThrottler.getTracker ??
      this.commonOptions.getTracker!;
    const generateKey =
      read<ThrottlerGenerateKeyFunction>(THROTTLER_KEY_GENERATOR) ??
      namedThrottler.generateKey ??
      this.commonOptions.generateKey!;
    return this.handleRequest({
      context,
      limit,
      ttl,
      throttler: namedThrottler,
      blockDuration,
      getTracker,
      generateKey,
    });
  }

  protected async shouldSkip(_context: ExecutionContext): Promise<boolean> {
    return false;
  }

  protected async handleRequest(requestProps: ThrottlerRequest): Promise<boolean> {
    const { context, limit, ttl, throttler, blockDuration, getTracker, generateKey } = requestProps;
    const { req, res } = this.getRequestResponse(context);
    const ignoreUserAgents = throttler.ignoreUserAgents ?? this.commonOptions.ignoreUserAgents;
    if (Array.isArray(ignoreUserAgents)) {
      for (const pattern of ignoreUserAgents) {
        if (pattern.test(req.headers?.['user-agent'])) return true;
      }
    }
    const tracker = await this.hookDeadline.bound(getTracker(req, context), 'getTracker');
    const key = generateKey(context, tracker, throttler.name!);
    const record = await this.storageService.increment(
      key,
      ttl,
      limit,
      blockDuration,
      throttler.name!,
    );
    const answer = storeAnswerOf(record);
    if (decisionsWatched())
      publishThrottlerDecision(
        context,
        throttler.name!,
        limit,
        record,
        answer,
        (this.storageService as Partial<ThrottlerStorageService>).engine?.owner,
      );
    // The store failed and failMode 'open' admits: nothing is known to put in headers.
    if (answer?.failed) return true;
    const setHeaders = throttler.setHeaders ?? this.commonOptions.setHeaders ?? true;
    if (record.isBlocked) {
      if (setHeaders) this.writeHeaders(res, throttler.name!, limit, ttl, record);
      await this.throwThrottlingException(context, { limit, ttl, key, tracker, ...record });
    }
    if (setHeaders) this.writeHeaders(res, throttler.name!, limit, ttl, record);
    return true;
  }

  /**
   * The headers of one throttler's decision, as the `headers` option asks:
   * throttler's (`X-RateLimit-*-<name>`, `Retry-After-<name>` on a denial),
   * draft -11's (one member per throttler, `Retry-After`), or both.
   */
  private writeHeaders(
    res: Record<string, any>,
    name: string,
    limit: number,
    ttl: number,
    record: ThrottlerStorageRecord,
  ): void {
    const format = this.headerFormat;
    if (format !== 'draft') {
      const suffix = name === 'default' ? '' : `-${name}`;
      if (record.isBlocked)
        this.setResponseHeader(res, `Retry-After${suffix}`, record.timeToBlockExpire);
      else {
        this.setResponseHeader(res, `${this.headerPrefix}-Limit${suffix}`, limit);
        this.setResponseHeader(
          res,
          `${this.headerPrefix}-Remaining${suffix}`,
          Math.max(0, limit - record.totalHits),
        );
        this.setResponseHeader(res, `${this.headerPrefix}-Reset${suffix}`, record.timeToExpire);
      }
    }
    if (format === 'throttler') return;
    const members = addDraftMember(res, {
      name,
      quota: limit,
      windowSeconds: Math.max(1, Math.ceil(ttl / 1000)),
      remaining: record.isBlocked ? 0 : Math.max(0, limit - record.totalHits),
      resetSeconds: Math.max(1, record.isBlocked ? record.timeToBlockExpire : record.timeToExpire),
    });
    this.setResponseHeader(res, 'RateLimit-Policy', draftPolicy(members));
    this.setResponseHeader(res, 'RateLimit', draftRateLimit(members));
    if (record.isBlocked) this.setResponseHeader(res, 'Retry-After', record.timeToBlockExpire);
  }

  protected async getTracker(req: Record<string, any>): Promise<string> {
    return normalizeIp(req.ip as string, this.ipv6SubnetPrefix);
  }

  protected setResponseHeader(
    res: Record<string, any>,
    name: string,
    value: string | number,
  ): void {
    if (typeof res.header === 'function') res.header(name, value);
    else if (typeof res.setHeader === 'function') res.setHeader(name, value);
  }

  protected getRequestResponse(context: ExecutionContext): {
    req: Record<string, any>;
    res: Record<string, any>;
  } {
    const http = context.switchToHttp();
    return { req: http.getRequest(), res: http.getResponse() };
  }

  protected generateKey(context: ExecutionContext, suffix: string, name: string): string {
    const prefix = `${context.getClass().name}-${context.getHandler().name}-${name}`;
    return createHash('sha256').update(`${prefix}-${suffix}`).digest('hex');
  }

  protected async throwThrottlingException(
    context: ExecutionContext,
    throttlerLimitDetail: ThrottlerLimitDetail,
  ): Promise<void> {
    throw new ThrottlerException(await this.getErrorMessage(context, throttlerLimitDetail));
  }

  protected async getErrorMessage(
    context: ExecutionContext,
    throttlerLimitDetail: ThrottlerLimitDetail,
  ): Promise<string> {
    if (Array.isArray(this.options) || !this.options.errorMessage) return this.errorMessage;
    return typeof this.options.errorMessage === 'function'
      ? this.options.errorMessage(context, throttlerLimitDetail)
      : this.options.errorMessage;
  }

  private toNumber(value: unknown, option: string, throttlerName: string): number {
    const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
    if (typeof number !== 'number' || Number.isNaN(number))
      throw new ThrottlerHookFailure(
        `Invalid "${option}" for the "${throttlerName}" throttler: expected a number, got ${JSON.stringify(value)}.`,
      );
    return number;
  }

  private async resolveValue<T>(
    context: ExecutionContext,
    value: T | ((context: ExecutionContext) => T | Promise<T>),
    option: string,
  ): Promise<T> {
    return typeof value === 'function'
      ? this.hookDeadline.bound(
          (value as (context: ExecutionContext) => T | Promise<T>)(context),
          `the ${option} function`,
        )
      : value;
  }
}
