import type { ExecutionContext } from '@nestjs/common';
import { describeValue } from '../../errors/option-error.js';
import { rejectUnknownOptions } from '../../errors/unknown-options.js';
import type { AdaptiveConcurrencyOptions } from '../../interfaces/adaptive-concurrency-options.interface.js';
import { integerOption } from '../../limits/integer-option.js';
import { parseDuration } from '../../limits/parse-duration.js';
import type { AdaptiveConcurrencyConfig } from './adaptive-concurrency.js';
import { GRADIENT_DEFAULTS } from './gradient-limit.js';

/** The largest `adaptive.max`: one process serving more calls at once than this is not protecting anything. */
export const MAX_ADAPTIVE_LIMIT = 100_000;
/** The largest backlog: callers held in memory, per key. */
export const MAX_BACKLOG_SIZE = 10_000;
/** The longest backlog wait: a minute (a queue longer than that is an outage, not smoothing). */
export const MAX_BACKLOG_TIMEOUT_MS = 60_000;

const OPTIONS = ['adaptive', 'partitions', 'partition', 'backlog'];
const ADAPTIVE_OPTIONS = ['min', 'max', 'initial', 'algorithm', 'tolerance', 'probeInterval'];
const BACKLOG_OPTIONS = ['size', 'timeout'];

/** What an adaptive `concurrency` resolves to: the limiter's config and the call's partition. @internal */
export interface ResolvedAdaptiveConcurrency {
  readonly config: AdaptiveConcurrencyConfig;
  /** The call's partition name as `partition` answers it (0 without partitions). */
  readonly partitionOf: (context: ExecutionContext) => unknown;
  /** A partition name's index; -1 for a name not declared. */
  readonly indexOf: (name: unknown) => number;
  /** Partition names in priority order, for the log and events. */
  readonly partitionNames: readonly string[];
}

type Fail = (option: string, problem: string) => never;

/**
 * Validate `concurrency: { adaptive, partitions?, partition?, backlog? }`.
 * Every problem is a start-up error naming the option.
 */
export function resolveAdaptiveConcurrency(
  value: AdaptiveConcurrencyOptions,
  where: string,
  fail: Fail,
): ResolvedAdaptiveConcurrency {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    fail(
      'concurrency',
      `must be a positive integer or { adaptive: { min, max } }, got ${describeValue(value)}`,
    );
  rejectUnknownOptions(where, value, OPTIONS, 'concurrency.');
  if (value.adaptive === undefined)
    fail(
      'concurrency.adaptive',
      'is required in the object form ({ adaptive: { min, max } }); a static limit is concurrency: N',
    );
  const controller = resolveController(value.adaptive, where, fail);
  const partitions = resolvePartitions(value.partitions, fail);
  if ((value.partition === undefined) !== (partitions.length === 0))
    fail(
      value.partition === undefined ? 'concurrency.partition' : 'concurrency.partitions',
      value.partition === undefined
        ? 'is required with concurrency.partitions: a function of the call answering a partition name'
        : 'is required with concurrency.partition: the shares, such as { critical: 0.9, batch: 0.1 }',
    );
  if (value.partition !== undefined && typeof value.partition !== 'function')
    fail(
      'concurrency.partition',
      `must be a function of the call answering a partition name, got ${describeValue(value.partition)}`,
    );
  const backlog = resolveBacklog(value.backlog, where, fail);
  const choose = value.partition;
  const index = new Map(partitions.map((p, i) => [p.name, i]));
  return {
    config: { controller, partitions, backlog },
    partitionOf: choose === undefined ? () => 0 : (context) => choose(context),
    indexOf: (name) => index.get(name as string) ?? -1,
    partitionNames: partitions.map((p) => p.name),
  };
}

function resolveController(
  adaptive: AdaptiveConcurrencyOptions['adaptive'],
  where: string,
  fail: Fail,
): AdaptiveConcurrencyConfig['controller'] {
  if (adaptive === null || typeof adaptive !== 'object')
    fail(
      'concurrency.adaptive',
      `must be { min, max, initial?, algorithm? }, got ${describeValue(adaptive)}`,
    );
  rejectUnknownOptions(where, adaptive, ADAPTIVE_OPTIONS, 'concurrency.adaptive.');
  const count = (option: string, value: unknown): number =>
    integerOption(value, `concurrency.adaptive.${option}`, 1, MAX_ADAPTIVE_LIMIT, fail);
  const min = count('min', adaptive.min);
  const max = count('max', adaptive.max);
  if (max < min) fail('concurrency.adaptive.max', `must be at least min (${min}), got ${max}`);
  const initial =
    adaptive.initial === undefined
      ? Math.min(max, Math.max(min, 10))
      : count('initial', adaptive.initial);
  if (initial < min || initial > max)
    fail(
      'concurrency.adaptive.initial',
      `must be between min (${min}) and max (${max}), got ${initial}`,
    );
  if (adaptive.algorithm !== undefined && adaptive.algorithm !== 'gradient')
    fail(
      'concurrency.adaptive.algorithm',
      `must be 'gradient' (the only one), got ${describeValue(adaptive.algorithm)}`,
    );
  const tolerance = adaptive.tolerance ?? GRADIENT_DEFAULTS.tolerance;
  if (typeof tolerance !== 'number' || !(tolerance >= 1 && tolerance <= 10))
    fail(
      'concurrency.adaptive.tolerance',
      `must be a number from 1 to 10, got ${describeValue(tolerance)}`,
    );
  let probeIntervalMs: number = GRADIENT_DEFAULTS.probeIntervalMs;
  if (adaptive.probeInterval !== undefined) {
    const ms = parseDuration(adaptive.probeInterval);
    if (ms === undefined || ms < 1000)
      fail(
        'concurrency.adaptive.probeInterval',
        `must be a duration of at least a second, such as '30s', got ${describeValue(adaptive.probeInterval)}`,
      );
    probeIntervalMs = ms!;
  }
  return { ...GRADIENT_DEFAULTS, min, max, initial, tolerance, probeIntervalMs };
}

function resolvePartitions(
  value: AdaptiveConcurrencyOptions['partitions'],
  fail: Fail,
): { name: string; share: number }[] {
  if (value === undefined) return [];
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    fail(
      'concurrency.partitions',
      `must be an object of shares such as { critical: 0.9, batch: 0.1 }, got ${describeValue(value)}`,
    );
  const entries = Object.entries(value);
  if (entries.length < 2 || entries.length > 16)
    fail('concurrency.partitions', `must name from 2 to 16 partitions, got ${entries.length}`);
  let total = 0;
  for (const [name, share] of entries) {
    if (typeof share !== 'number' || !(share > 0 && share <= 1))
      fail(
        `concurrency.partitions.${name}`,
        `must be a share in (0, 1], got ${describeValue(share)}`,
      );
    total += share;
  }
  if (total > 1 + 1e-9)
    fail('concurrency.partitions', `shares must add up to at most 1, got ${total}`);
  return entries.map(([name, share]) => ({ name, share }));
}

function resolveBacklog(
  value: AdaptiveConcurrencyOptions['backlog'],
  where: string,
  fail: Fail,
): AdaptiveConcurrencyConfig['backlog'] {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object')
    fail('concurrency.backlog', `must be { size, timeout }, got ${describeValue(value)}`);
  rejectUnknownOptions(where, value, BACKLOG_OPTIONS, 'concurrency.backlog.');
  const size = integerOption(value.size, 'concurrency.backlog.size', 1, MAX_BACKLOG_SIZE, fail);
  const timeoutMs = parseDuration(value.timeout);
  if (timeoutMs === undefined || timeoutMs > MAX_BACKLOG_TIMEOUT_MS)
    fail(
      'concurrency.backlog.timeout',
      `must be a positive duration up to a minute, such as '1s', got ${describeValue(value.timeout)}`,
    );
  return { size, timeoutMs: Math.ceil(timeoutMs!) };
}
