import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * The public surface, name by name: what each entry point in package.json
 * `exports` exports, as values (present at run time) and as types, read from
 * the built package by `scripts/count-exports.mjs` (needs `npm run build`
 * first; `npm test` does it), and the members of a type-only namespace
 * (`RateLimitTypes`, one name at the root). A name added, removed or moved
 * between entry points (or into or out of the namespace) fails here until this
 * list (and CHANGELOG.md) says so. Also: no
 * function, class or constant is exported as a type only (usable in types,
 * missing at run time), and the entry points an application or a custom store
 * loads bring in no optional peer dependency.
 */
const root = resolve(import.meta.dirname, '../..');

interface EntryReport {
  readonly values: readonly string[];
  readonly types: readonly string[];
  readonly typeOnlyValues: readonly string[];
  readonly namespaces: Readonly<Record<string, readonly string[]>>;
}

const words = (text: string): string[] => text.split(/\s+/).filter(Boolean).sort();

const SURFACE: Record<
  string,
  { values: string[]; types: string[]; namespaces?: Record<string, string[]> }
> = {
  '.': {
    values: words(`
      RateLimitModule RATE_LIMIT_MODULE_OPTIONS RATE_LIMIT_CLOCK RATE_LIMIT_STORE DEFAULT_LIMIT_NAME
      RateLimit SkipRateLimit RateLimitGuard RateLimitInterceptor RateLimiter
      RateLimitExceededException RateLimitExceptionFilter QUOTA_EXCEEDED_TYPE RateLimitStoreError RateLimitKeyError RateLimitValueError RateLimitGraphqlError
      clientAddress parseRate AdaptiveRateProvider RateLimitEvents ManualClock systemClock MemoryStore`),
    types: words(`
      RateLimitStoreFailure ProgrammaticLimit RateLimitReservation AcquireOptions RateLimitDecision HotKey HottestKeysQuery
      RateLimitExceededDetails
      RateLimitOptions Rate KeyStrategy FailMode ChargeMode RateLimitOutcome
      RateLimitModuleOptions RateLimitOptionsFactory
      RateLimitTransport RequestResponse RateLimitDenial
      AdaptiveOptions RateLimitEventMap RateLimitClock RateLimitStore MemoryStoreOptions
      RateLimitTypes`),
    // `RateLimitTypes.CalendarOptions`, ...: the secondary types, one name at the root.
    namespaces: {
      RateLimitTypes: words(`
        BaseLimitOptions RequestRateOptions TokenBucketLimitOptions WindowLimitOptions ConcurrencyLimitOptions
        DynamicRate DynamicBurst KeyFunctionResult RateLimitAlgorithm CalendarOptions SkipPredicate RateLimitSettleOutcome
        HeadersMode ErrorFormat TrustProxy HotKeysOptions RateLimitMetricsOptions RateLimitEventsOptions
        AdaptiveHandlerResult AdaptiveOutcome AdaptiveRateChange AdaptiveRateListener ClockTimer
        RateLimitEventType RateLimitEventListener LimitVerdict
        AdaptiveConcurrencyOptions AdaptiveConcurrencyLimitOptions ConcurrencyLimitState ConcurrencyLimitChangeEvent
        RateLimitDeniedEvent RateLimitShadowDeniedEvent RateLimitStoreFailureEvent RateLimitStoreRecoveredEvent RateLimitFallbackEvent RateLimitPenaltyEvent`),
    },
  },
  './store': {
    values: words(`
      capacityOf isWindowLimit allTokenBuckets RateLimitStoreError toStoreError
      algorithmOf consumeAllOrNothing reportUncharged bucketNamespace RelativeTime SweptMap
      describeStoreContract describeWindowStoreContract`),
    types: words(`
      RateLimitStore AlgorithmName TokenBucketLimit CalendarAlignment FixedWindowLimit SlidingWindowLimit WindowLimit StoreLimit
      BucketRef RateLimitCheck TokenBucketCheck ConsumeRequest TokenBucketRequest ConsumeResult BucketsRequest RefundRequest
      BlockCheck BlockRequest SettleCheck SettleRequest MaybePromise LocalFallback StoreHealth HealthRequest
      ConcurrencySlots SlotAcquireRequest SlotAcquireResult SlotReleaseRequest RateLimitDecision
      BucketAlgorithm BucketState BucketStates StoreContractOptions StoreContractFramework`),
  },
  './algorithms': {
    values: words(`
      gcraConsume gcraPeek gcraRefund gcraSettle gcraBlock emissionIntervalMs nextTokenMs
      fixedWindowBounds fixedWindowConsume fixedWindowPeek slidingWaitMs slidingWindowConsume slidingWindowPeek
      calendarBoundaries calendarWindow windowRefund TOKEN_EPSILON`),
    types: words(
      'BucketLimit GcraOutcome DenyReason RateLimitDecision WindowBounds WindowOutcome WindowState',
    ),
  },
  './adaptive': {
    values: words(
      'AdaptiveController aimdNext classifyWindow effectiveBucket ADAPTIVE_DEFAULTS resolveAdaptiveOptions seededRandom',
    ),
    types: words('AimdParams AimdState WindowStats WindowVerdict AdaptiveConfig'),
  },
  './observability': {
    values: [],
    types: words(`
      DecisionEvent DecisionResult StoreFailureEvent LocalFallbackEvent StoreCallEvent StoreRecoveryEvent
      FallbackChangeEvent PenaltyChannelEvent RateChangeChannelEvent RateLimitOwner RateLimitChannelEvents
      MeterProviderLike PrometheusRegistryLike`),
  },
  './redis': {
    values: words('RedisStore DEFAULT_REDIS_TIMEOUT_MS'),
    types: words('RedisStoreOptions LeaseCheck LeaseRequest LeaseResult RedisClient'),
  },
  './two-tier': {
    values: words('TwoTierStore'),
    types: words('TwoTierStoreOptions TwoTierStoreStats'),
  },
  './graphql': {
    values: words('graphqlComplexity resolvedComplexity'),
    types: words('GraphqlComplexityOptions GraphqlComplexityLimit OperationParts'),
  },
  './throttler-compat': {
    values: words(`
      ThrottlerModule ThrottlerGuard Throttle SkipThrottle InjectThrottlerOptions InjectThrottlerStorage
      ThrottlerException throttlerMessage ThrottlerStorage ThrottlerStorageService getOptionsToken getStorageToken
      THROTTLER_OPTIONS seconds minutes hours days weeks normalizeIp DEFAULT_IPV6_SUBNET_PREFIX`),
    types: words(`
      ThrottlerMethodOrControllerOptions ThrottlerStorageRecord Resolvable ThrottlerOptions ThrottlerModuleOptions
      ThrottlerAsyncOptions ThrottlerOptionsFactory ThrottlerGetTrackerFunction ThrottlerGenerateKeyFunction
      ThrottlerLimitDetail ThrottlerRequest`),
  },
  './terminus': {
    values: words('RateLimitHealthIndicator RateLimitHealthModule'),
    types: words('RateLimitHealthOptions StoreHealth HealthRequest'),
  },
};

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  exports: Record<string, string | { require: { default: string } }>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};

describe('the public surface', () => {
  let report: Record<string, EntryReport>;

  beforeAll(() => {
    report = JSON.parse(
      execFileSync(process.execPath, ['scripts/count-exports.mjs', '--json'], {
        cwd: root,
        encoding: 'utf8',
      }),
    ) as Record<string, EntryReport>;
  }, 60_000);

  it('is, name by name, the documented one for every entry point', () => {
    const found = Object.fromEntries(
      Object.entries(report).map(([entry, { values, types, namespaces }]) => [
        entry,
        {
          values: [...values].sort(),
          types: [...types].sort(),
          ...(Object.keys(namespaces).length > 0 && {
            namespaces: Object.fromEntries(
              Object.entries(namespaces).map(([name, members]) => [name, [...members].sort()]),
            ),
          }),
        },
      ]),
    );
    expect(found).toEqual(SURFACE);
  });

  it('exports every function, class and constant as a value (none as a type only)', () => {
    expect(
      Object.fromEntries(
        Object.entries(report).map(([entry, { typeOnlyValues }]) => [entry, typeOnlyValues]),
      ),
    ).toEqual(Object.fromEntries(Object.keys(SURFACE).map((entry) => [entry, []])));
  });

  it('keeps the root to what an application needs (a budget: raise it deliberately)', () => {
    const rootNames = report['.']!.values.length + report['.']!.types.length;
    // 49: RateLimitReservation (RateLimiter.reserve's answer, issue 30).
    expect(rootNames).toBeLessThanOrEqual(49);
  });

  it.each(['.', './store', './algorithms', './adaptive', './observability', './throttler-compat'])(
    'require(%s) loads no optional peer dependency',
    (entry) => {
      const optional = Object.entries(pkg.peerDependenciesMeta)
        .filter(([, meta]) => meta.optional)
        .map(([name]) => name);
      const target = pkg.exports[entry];
      if (typeof target !== 'object') throw new Error(`no require condition for ${entry}`);
      // A fresh process: what requiring the entry point loads, from the module cache.
      const script = `require(${JSON.stringify(join(root, target.require.default))});
        process.stdout.write(JSON.stringify(Object.keys(require.cache)));`;
      const loaded = JSON.parse(
        execFileSync(process.execPath, ['-e', script], { cwd: root, encoding: 'utf8' }),
      ) as string[];
      const peers = optional.filter((name) =>
        loaded.some((file) => file.includes(`/node_modules/${name}/`)),
      );
      expect(peers).toEqual([]);
      // The check can see a dependency: @nestjs/common is loaded by every one of these but the pure ones.
      if (entry === '.')
        expect(loaded.some((file) => file.includes('/node_modules/@nestjs/common/'))).toBe(true);
    },
    30_000,
  );
});
