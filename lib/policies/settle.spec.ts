import type { ExecutionContext } from '@nestjs/common';
import { limitContext } from '../../test/utils/limit-context.js';
import type { RateLimitEngine } from '../engine/rate-limit-engine.js';
import { resolveLimit } from '../limits/resolve-limit.js';
import type { ResolvedLimit } from '../limits/resolved-limit.js';
import type { RateLimitCheck, SettleCheck } from '../store/rate-limit-store.interface.js';
import type { AfterHandlerServices, HandlerOutcome } from './call-steps.js';
import { actualCost, settleByOutcome, settlementOf, SettleProblemLog } from './settle.js';

const context = limitContext({ storeSettles: true });
const check = (cost: number): RateLimitCheck => ({
  key: 'k',
  namespace: 'tb|tokens|r1|',
  identity: 'k',
  limit: { algorithm: 'token-bucket', rate: 100, burst: 1000 },
  cost,
});

describe('settle: resolution', () => {
  it('takes a function, and refuses what it cannot mean, naming the option', () => {
    const settle = () => 1;
    expect(resolveLimit({ rate: 5, settle }, context).settle).toBe(settle);
    expect(resolveLimit({ rate: 5 }, context).settle).toBeUndefined();
    expect(() => resolveLimit({ rate: 5, settle: 3 as never }, context)).toThrow(
      /settle must be a function/,
    );
    expect(() => resolveLimit({ rate: 5, settle, charge: 'failures' }, context)).toThrow(
      /settle cannot be combined with charge/,
    );
    expect(() => resolveLimit({ rate: 5, settle, shadow: true }, context)).toThrow(
      /settle is not supported on a shadow limit/,
    );
    expect(() =>
      resolveLimit({ rate: '5/min', algorithm: 'fixed-window', settle } as never, context),
    ).toThrow(/settle only works with algorithm 'token-bucket'/);
    expect(() => resolveLimit({ rate: 5, settle }, limitContext({ storeSettles: false }))).toThrow(
      /settle needs a store that can settle/,
    );
  });
});

describe('settle: the arithmetic', () => {
  it('an actual cost is a number >= 0', () => {
    expect(actualCost(0)).toEqual({ actual: 0 });
    expect(actualCost(12.5)).toEqual({ actual: 12.5 });
    for (const bad of [-1, Number.NaN, Infinity, '3', undefined, null])
      expect(actualCost(bad).problem).toMatch(/not a number >= 0/);
  });

  it('the difference from the reservation, on the same bucket; none when equal', () => {
    expect(settlementOf(check(100), 40)).toMatchObject({ key: 'k', delta: -60, identity: 'k' });
    expect(settlementOf(check(100), 250)).toMatchObject({ delta: 150 });
    expect(settlementOf(check(100), 100)).toBeUndefined();
  });
});

describe('settle: the step after the handler', () => {
  const settled: SettleCheck[][] = [];
  const services = {
    engine: {
      settleCharged: (checks: SettleCheck[]) => settled.push(checks),
    } as unknown as RateLimitEngine,
  } as AfterHandlerServices;
  const limit = (name: string, settle: ResolvedLimit['settle']) =>
    ({ name, settle }) as unknown as ResolvedLimit;
  const outcome = (
    limits: ResolvedLimit[],
    checks: RateLimitCheck[] | undefined,
  ): HandlerOutcome => ({
    context: {} as ExecutionContext,
    limits,
    checks,
    response: undefined,
    result: { usage: 30 },
    error: undefined,
    failed: false,
    latencyMs: 0,
  });
  beforeEach(() => (settled.length = 0));

  it('settles every limit with settle in one store call, from what the handler returned', () => {
    const usage = ({ result }: { result: unknown }) => (result as { usage: number }).usage;
    settleByOutcome(
      outcome(
        [limit('a', usage), limit('plain', undefined), limit('b', () => 130)],
        [check(100), check(1), check(100)],
      ),
      services,
    );
    expect(settled).toEqual([
      [expect.objectContaining({ delta: -70 }), expect.objectContaining({ delta: 30 })],
    ]);
  });

  it('waits for a settle that answers with a promise', async () => {
    settleByOutcome(outcome([limit('a', async () => 0)], [check(100)]), services);
    expect(settled).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toEqual([[expect.objectContaining({ delta: -100 })]]);
  });

  it('a settle that throws, rejects or answers nonsense settles at the estimate; nothing without checks', async () => {
    const boom = () => {
      throw new Error('boom');
    };
    settleByOutcome(
      outcome([limit('x', boom), limit('y', () => -1)], [check(100), check(100)]),
      services,
    );
    settleByOutcome(
      outcome([limit('z', () => Promise.reject(new Error('no')))], [check(100)]),
      services,
    );
    settleByOutcome(outcome([limit('a', () => 0)], undefined), services);
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toEqual([[], []]);
  });
});

describe('SettleProblemLog', () => {
  it('says the first problem of a burst, and its end with the count', () => {
    const lines: string[] = [];
    const log = new SettleProblemLog({
      warn: (m: string) => lines.push(m),
      log: (m: string) => lines.push(m),
    } as never);
    log.problem('tokens', 'answered NaN, not a number >= 0');
    log.problem('tokens', 'answered NaN, not a number >= 0');
    log.answered('tokens');
    log.answered('tokens');
    expect(lines).toEqual([
      expect.stringContaining('limit "tokens": settle answered NaN'),
      expect.stringContaining('after 2 call(s) settled at their estimate'),
    ]);
  });
});
