import { Logger } from '@nestjs/common';
import { TOKEN_EPSILON } from '../algorithms/token-epsilon.js';
import { describeValue } from '../errors/option-error.js';
import type { RateLimitSettleOutcome } from '../interfaces/rate-limit-options.interface.js';
import type {
  RateLimitCheck,
  SettleCheck,
  TokenBucketLimit,
} from '../store/rate-limit-store.interface.js';
import { isPromiseLike } from '../util/maybe-promise.js';
import type { AfterHandlerStep, HandlerOutcome } from './call-steps.js';
import type { LimitPolicy } from './limit-policy.js';

/** A limit's `settle`, validated: what a call really cost. */
export type SettleFunction = (outcome: RateLimitSettleOutcome) => number | Promise<number>;

/**
 * What the call really cost, as `settle` answered: a number >= 0, or
 * `undefined` with the reason when the answer cannot be used (the call is
 * then settled at its estimate). Pure.
 */
export function actualCost(answer: unknown): { actual?: number; problem?: string } {
  if (typeof answer !== 'number' || !Number.isFinite(answer) || answer < 0)
    return { problem: `answered ${describeValue(answer)}, not a number >= 0` };
  return { actual: answer };
}

/**
 * The settlement of one check: the difference between what it reserved and
 * what was spent (`undefined` when there is none to apply). Pure.
 */
export function settlementOf(check: RateLimitCheck, actual: number): SettleCheck | undefined {
  const delta = actual - check.cost;
  if (Math.abs(delta) <= TOKEN_EPSILON) return undefined;
  const settled: SettleCheck = {
    key: check.key,
    limit: check.limit as TokenBucketLimit,
    delta,
  };
  // The key's two parts, when the module gave them: an in-process store indexes by them.
  if (check.namespace !== undefined)
    return { ...settled, namespace: check.namespace, identity: check.identity };
  return settled;
}

/**
 * Unusable answers of `settle` (a throw, a rejection, not a number >= 0),
 * said once per burst and per limit: the first with its reason, the end of
 * the burst (the limit's next good answer) with the count. Bounded by the
 * number of limits declared: the names are the application's, never a
 * caller's.
 *
 * @internal
 */
export class SettleProblemLog {
  private readonly bursts = new Map<string, number>();

  constructor(private readonly logger: Pick<Logger, 'warn' | 'log'> = new Logger('RateLimit')) {}

  problem(limitName: string, problem: string): void {
    const count = this.bursts.get(limitName) ?? 0;
    this.bursts.set(limitName, count + 1);
    if (count === 0)
      this.logger.warn(
        `RateLimit: limit "${limitName}": settle ${problem}; the call is settled at its estimate (cost). ` +
          'Said once until settle answers again.',
      );
  }

  answered(limitName: string): void {
    const count = this.bursts.get(limitName);
    if (count === undefined) return;
    this.bursts.delete(limitName);
    this.logger.log(
      `RateLimit: limit "${limitName}": settle answers again, after ${count} call(s) settled at their estimate`,
    );
  }
}

const problems = new SettleProblemLog();

/**
 * The step after the handler: each limit with `settle` is asked what the
 * call really cost, and the difference from its reservation goes to its
 * bucket (one store call for all, not awaited; after every answer when some
 * are promises). Never throws; a promise never rejects.
 */
export const settleByOutcome: AfterHandlerStep = (outcome, { engine }) => {
  const { checks, limits } = outcome;
  if (checks === undefined) return; // admitted without a store decision: nothing was reserved
  const settlements: (SettleCheck | undefined | Promise<SettleCheck | undefined>)[] = [];
  let waiting = false;
  for (let i = 0; i < limits.length; i++) {
    const { settle, name } = limits[i]!;
    const check = checks[i];
    if (settle === undefined || check === undefined) continue;
    const settlement = settleOne(settle, name, check, outcome);
    if (isPromiseLike(settlement)) waiting = true;
    settlements.push(settlement);
  }
  const apply = (done: readonly (SettleCheck | undefined)[]) =>
    engine.settleCharged(done.filter((check) => check !== undefined));
  if (!waiting) apply(settlements as (SettleCheck | undefined)[]);
  else void Promise.all(settlements).then(apply);
};

/** One limit's settlement: its `settle` asked, its answer checked. A promise only when `settle` gave one; never rejects. */
function settleOne(
  settle: SettleFunction,
  name: string,
  check: RateLimitCheck,
  outcome: HandlerOutcome,
): SettleCheck | undefined | Promise<SettleCheck | undefined> {
  const { result, response, error, context } = outcome;
  const judge = (answer: unknown): SettleCheck | undefined => {
    const { actual, problem } = actualCost(answer);
    if (actual === undefined) {
      problems.problem(name, problem!);
      return undefined;
    }
    problems.answered(name);
    return settlementOf(check, actual);
  };
  const failed = (thrown: unknown): undefined => {
    problems.problem(name, `threw (${thrown instanceof Error ? thrown.message : String(thrown)})`);
    return undefined;
  };
  let answer: number | Promise<number>;
  try {
    answer = settle({ result, response, error, context, reserved: check.cost });
  } catch (thrown) {
    return failed(thrown);
  }
  return isPromiseLike(answer) ? Promise.resolve(answer).then(judge, failed) : judge(answer);
}

/**
 * `settle`: acts after the handler (`RateLimitInterceptor`, bound by
 * `@RateLimit()` for it); for a stream, when it ends.
 */
export const settlePolicy: LimitPolicy<'settle'> = {
  options: ['settle'],
  refusedOnConcurrency: {
    settle:
      'is a rate-limit option; a concurrency limit holds one slot per request, whatever it costs',
  },
  appliesTo: (limit) => limit.settle !== undefined,
  afterHandler: settleByOutcome,
  needsInterceptor: (options) => options.settle !== undefined,
  resolve: (options, draft, context, fail) => {
    const { settle } = options;
    if (settle === undefined) return { settle: undefined };
    if (typeof settle !== 'function')
      fail(
        'settle',
        `must be a function ({ result, response, error, context }) => cost, got ${describeValue(settle)}`,
      );
    if (draft.charge !== undefined)
      fail(
        'settle',
        'cannot be combined with charge: settle decides what the call costs (answer 0 for a call that should not count)',
      );
    if (draft.shadow === true)
      fail(
        'settle',
        'is not supported on a shadow limit (it would put a bucket nobody enforces into debt)',
      );
    if (context.storeSettles === false)
      fail(
        'settle',
        'needs a store that can settle (RateLimitStore.settle); MemoryStore, RedisStore and TwoTierStore can',
      );
    return { settle: settle as SettleFunction };
  },
};
