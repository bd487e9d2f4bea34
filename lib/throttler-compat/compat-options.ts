import { describeValue } from '../errors/option-error.js';
import type { FailMode } from '../interfaces/rate-limit-options.interface.js';
import { failModeProblem } from '../limits/fail-mode.js';
import type { RateLimitStore } from '../store/rate-limit-store.interface.js';
import type {
  ThrottlerHeaders,
  ThrottlerModuleOptions,
  ThrottlerOptions,
} from './throttler-module-options.interface.js';
import type { ThrottlerStorage } from './throttler-storage.interface.js';

/** The options `@nestjs/throttler` lacks, checked: what the storage and the guard read. @internal */
export interface CompatOptions {
  /** A store given in `storage`, counted by `ThrottlerStorageService`. */
  readonly store: RateLimitStore | undefined;
  /** A `ThrottlerStorage` given in `storage`: the guard calls its `increment` as it is. */
  readonly storage: ThrottlerStorage | undefined;
  readonly failMode: FailMode;
  readonly headers: ThrottlerHeaders;
}

const HEADERS: readonly ThrottlerHeaders[] = ['throttler', 'draft', 'both'];

/** Whether a `storage` option is one of this library's stores rather than a `ThrottlerStorage`. */
export function isRateLimitStore(value: unknown): value is RateLimitStore {
  const candidate = value as Partial<RateLimitStore> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.consume === 'function' &&
    typeof (candidate as { increment?: unknown }).increment !== 'function'
  );
}

/**
 * Reads and checks the module options at start-up: a bad value throws,
 * naming the option, so the application does not boot (as `RateLimitModule`
 * refuses its own).
 */
export function compatOptions(options: ThrottlerModuleOptions): CompatOptions {
  if (Array.isArray(options))
    return { store: undefined, storage: undefined, failMode: 'open', headers: 'throttler' };
  const { storage, failMode, headers } = options;
  const fail = (option: string, problem: string): never => {
    throw new TypeError(`ThrottlerModule option "${option}" ${problem}`);
  };
  if (
    storage !== undefined &&
    !isRateLimitStore(storage) &&
    typeof (storage as Partial<ThrottlerStorage> | null)?.increment !== 'function'
  )
    fail(
      'storage',
      `must be a ThrottlerStorage (with increment()) or a RateLimitStore (MemoryStore, RedisStore, TwoTierStore), got ${describeValue(storage)}`,
    );
  const store = isRateLimitStore(storage) ? storage : undefined;
  if (headers !== undefined && !HEADERS.includes(headers))
    fail('headers', `must be 'throttler', 'draft' or 'both', got ${describeValue(headers)}`);
  if (failMode !== undefined) {
    if (storage !== undefined && store === undefined)
      fail(
        'failMode',
        "applies to a RateLimitStore in storage; a ThrottlerStorage's failures are its own (pass a RedisStore or TwoTierStore instead)",
      );
    const problem = failModeProblem(failMode, store?.localFallback !== undefined);
    if (problem !== undefined) fail('failMode', problem);
  }
  return {
    store,
    storage: store === undefined ? (storage as ThrottlerStorage | undefined) : undefined,
    failMode: failMode ?? 'open',
    headers: headers ?? 'throttler',
  };
}

const THROTTLER_NUMBERS = ['limit', 'ttl', 'blockDuration'] as const;

/**
 * Checks each configured throttler at start-up: `limit`, `ttl` and
 * `blockDuration` are non-negative numbers, resolver functions (a resolver's
 * answer is checked per call, decided by `failMode` and said once) or absent.
 * Throttler itself would throw on every request; a bad static value stops the
 * boot here, naming the throttler and the option.
 */
export function checkThrottlers(throttlers: readonly ThrottlerOptions[]): void {
  throttlers.forEach((throttler, index) => {
    const where = `throttlers[${index}]${throttler.name === undefined ? '' : ` ("${String(throttler.name)}")`}`;
    if (throttler.name !== undefined && typeof throttler.name !== 'string')
      throw new TypeError(
        `ThrottlerModule option "${where}.name" must be a string, got ${describeValue(throttler.name)}`,
      );
    for (const option of THROTTLER_NUMBERS) {
      const value: unknown = throttler[option];
      // Absent: a route's @Throttle() may give it (throttler's own suite leaves ttl out with skipIf).
      if (value === undefined || typeof value === 'function') continue;
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
        throw new TypeError(
          `ThrottlerModule option "${where}.${option}" must be a non-negative number (ms for ttl and blockDuration), a function or absent, got ${describeValue(value)}`,
        );
    }
  });
}
