/**
 * Dynamic `rate`/`burst` functions that go wrong under a flood of distinct
 * callers (issue 26, item 9): functions that throw, reject, or answer values
 * no bucket can have. Each such call is decided by the limit's fail mode,
 * like a store failure, and said once per burst per route: never an
 * admission of everything unsaid, never a crash, never a line per request.
 * A function that never resolves is given DYNAMIC_LIMIT_TIMEOUT_MS of the
 * module clock, then decided like a failing one (before this, the guard
 * waited for it forever: 100 calls pending after an hour, nothing said).
 */
import { Controller, Get, type ExecutionContext } from '@nestjs/common';
import { RateLimit, type FailMode, type ManualClock } from 'nestjs-holdup';
import { DYNAMIC_LIMIT_TIMEOUT_MS } from '../../lib/policies/dynamic-limit.js';
import { createGuardHarness, flushPromises, type GuardHarness } from '../utils/guard-harness.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';

const callerOf = (ctx: ExecutionContext): string =>
  String(ctx.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers['x-caller']);
/**
 * Garbage, different per caller: what a bad lookup answers. (Not here: `null`
 * or `undefined` for a burst, which is the default burst; a rate of 1e300,
 * which is a rate, that Date.now()'s doubles can only charge coarsely: it
 * admits fewer, never more.)
 */
const GARBAGE: unknown[] = [
  NaN,
  -1,
  0,
  Infinity,
  -Infinity,
  'lots',
  '5/fortnight',
  '',
  {},
  [],
  true,
];
const garbage = (ctx: ExecutionContext): never =>
  GARBAGE[Number(callerOf(ctx).slice(7)) % GARBAGE.length] as never;

@Controller('plans')
class PlansController {
  @RateLimit({
    name: 'throws',
    key: 'header:x-caller',
    rate: () => {
      throw new Error('plan service unavailable');
    },
  })
  @Get('throws')
  throws() {
    return { ok: true };
  }

  @RateLimit({
    name: 'rejects',
    key: 'header:x-caller',
    rate: async () => Promise.reject(new Error('plan cache timeout')),
  })
  @Get('rejects')
  rejects() {
    return { ok: true };
  }

  @RateLimit({ name: 'garbage-rate', key: 'header:x-caller', rate: garbage, burst: 2 })
  @Get('garbageRate')
  garbageRate() {
    return { ok: true };
  }

  @RateLimit({ name: 'garbage-burst', key: 'header:x-caller', rate: '1/min', burst: garbage })
  @Get('garbageBurst')
  garbageBurst() {
    return { ok: true };
  }

  /** Garbage for odd callers only: the even ones are limited as declared. */
  @RateLimit({
    name: 'some',
    key: 'header:x-caller',
    rate: (ctx) => (Number(callerOf(ctx).slice(7)) % 2 === 0 ? '1/min' : (NaN as never)),
    burst: 1,
  })
  @Get('some')
  some() {
    return { ok: true };
  }

  @RateLimit({ name: 'hangs', rate: () => new Promise<string>(() => undefined) })
  @Get('hangs')
  hangs() {
    return { ok: true };
  }

  /** A plan lookup that answers, on the module's clock, just within the deadline. */
  @RateLimit({
    name: 'slow',
    key: 'header:x-caller',
    rate: () =>
      new Promise<string>((resolve) =>
        slowClock!.setTimer(DYNAMIC_LIMIT_TIMEOUT_MS - 1, () => resolve('1/min')),
      ),
    burst: 1,
  })
  @Get('slow')
  slow() {
    return { ok: true };
  }
}

const FAILING = ['throws', 'rejects', 'garbageRate', 'garbageBurst'] as const;
const CALLERS = 1_000;
const HANGING = 100;
/** The harness' clock, for the slow plan lookup. */
let slowClock: ManualClock | undefined;

describe('dynamic rate and burst functions under a flood of distinct callers', () => {
  let h: GuardHarness;
  const logs = silenceRateLimitLogs();
  afterEach(() => h?.close());

  const boot = async (failMode: FailMode) => {
    h = await createGuardHarness(PlansController, { failMode });
    slowClock = h.clock;
  };
  /** What the library said (Nest's own start-up lines left out). */
  const said = () => logs.messages().filter((line) => !line.endsWith('dependencies initialized'));
  const flood = async (route: string, callers = CALLERS) => {
    const statuses: Record<number, number> = {};
    for (let i = 0; i < callers; i++) {
      const { status } = await h.canActivate(route, { headers: { 'x-caller': `caller-${i}` } });
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
    return statuses;
  };

  it.each(FAILING)(
    "%s, failMode 'closed': every call refused (503), one log line for the burst",
    async (route) => {
      await boot('closed');
      expect(await flood(route)).toEqual({ 503: CALLERS });
      expect(said()).toEqual([expect.stringContaining('a rate or burst function failed')]);
    },
  );

  it("all four at once, failMode 'open': admitted by the fail mode, said once per route, and the summary counts every call", async () => {
    await boot('open');
    for (const route of FAILING) expect(await flood(route)).toEqual({ 200: CALLERS });
    expect(said()).toHaveLength(FAILING.length);
    await h.close(); // flushes the open bursts: their counts are said
    const summaries = said().filter((line) => line.includes('in the last burst'));
    expect(summaries).toEqual(
      FAILING.map(() => expect.stringContaining(`${CALLERS} call(s) whose rate or burst`)),
    );
    expect(said()).toHaveLength(2 * FAILING.length);
  });

  it('garbage for some callers does not switch limiting off for the others', async () => {
    await boot('closed');
    // Even callers: 1 admitted then denied; odd callers: refused by the fail mode.
    const first = await flood('some');
    const second = await flood('some');
    expect(first).toEqual({ 200: CALLERS / 2, 503: CALLERS / 2 });
    expect(second).toEqual({ 429: CALLERS / 2, 503: CALLERS / 2 });
    expect(said()).toHaveLength(1);
  });

  it.each([
    ['closed', 503],
    ['open', 200],
  ] as const)(
    "a function that never resolves, failMode '%s': every call answered %d at the deadline (DYNAMIC_LIMIT_TIMEOUT_MS of the module clock), one log line",
    async (failMode, status) => {
      await boot(failMode);
      const statuses: number[] = [];
      const calls = Array.from({ length: HANGING }, (_, i) =>
        h
          .canActivate('hangs', { headers: { 'x-caller': `caller-${i}` } })
          .then((answer) => statuses.push(answer.status)),
      );
      await flushPromises();
      h.clock.advance(DYNAMIC_LIMIT_TIMEOUT_MS - 1);
      await flushPromises();
      expect(statuses).toEqual([]); // still within the deadline
      h.clock.advance(1);
      await Promise.all(calls);
      expect(statuses).toEqual(Array.from({ length: HANGING }, () => status));
      expect(said()).toEqual([expect.stringContaining('did not answer within 2000 ms')]);
      expect(h.clock.pendingTimers).toBe(0); // no deadline left behind
      if (process.env.HOLDUP_REPORT)
        console.log(
          JSON.stringify({
            failMode,
            hanging: HANGING,
            answered: statuses.length,
            lines: said().length,
          }),
        );
    },
  );

  it('a slow function that answers within the deadline is waited for: limited as it says', async () => {
    await boot('closed');
    const first = h.canActivate('slow', { headers: { 'x-caller': 'a' } });
    await flushPromises();
    h.clock.advance(DYNAMIC_LIMIT_TIMEOUT_MS - 1); // the plan answers just in time
    expect((await first).status).toBe(200);
    const second = h.canActivate('slow', { headers: { 'x-caller': 'a' } });
    await flushPromises();
    h.clock.advance(DYNAMIC_LIMIT_TIMEOUT_MS - 1);
    expect((await second).status).toBe(429);
    expect(said()).toEqual([]);
    expect(h.clock.pendingTimers).toBe(0);
  });
});
