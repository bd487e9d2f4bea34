/**
 * Dynamic `rate`/`burst` functions that go wrong under a flood of distinct
 * callers (issue 26, item 9): functions that throw, reject, or answer values
 * no bucket can have. Each such call is decided by the limit's fail mode,
 * like a store failure, and said once per burst per route: never an
 * admission of everything unsaid, never a crash, never a line per request.
 * A function that never resolves is not bounded by the library: see the last
 * test (a finding, issue 26).
 */
import { Controller, Get, type ExecutionContext } from '@nestjs/common';
import { RateLimit, type FailMode } from 'nestjs-holdup';
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
}

const FAILING = ['throws', 'rejects', 'garbageRate', 'garbageBurst'] as const;
const CALLERS = 1_000;

describe('dynamic rate and burst functions under a flood of distinct callers', () => {
  let h: GuardHarness;
  const logs = silenceRateLimitLogs();
  afterEach(() => h?.close());

  const boot = async (failMode: FailMode) => {
    h = await createGuardHarness(PlansController, { failMode });
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

  it('a function that never resolves: nothing bounds the call (finding: the guard waits for it forever)', async () => {
    await boot('closed');
    let settled = 0;
    const calls = Array.from({ length: 100 }, (_, i) =>
      h.canActivate('hangs', { headers: { 'x-caller': `caller-${i}` } }).then(() => settled++),
    );
    await flushPromises();
    h.clock.advance(3_600_000); // an hour of the module's clock: no deadline applies
    await flushPromises();
    expect(settled).toBe(0);
    expect(said()).toEqual([]); // and nothing is said
    void calls;
  });
});
