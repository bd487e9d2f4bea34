/**
 * `shadow`, `skip` and `allowList` under a flood of distinct callers (issue
 * 26, item 9): 20,000 callers, each twice. What the library says stays
 * bounded by the application's routes and limits (one line per route, limit
 * and burst; a throwing predicate once), never by callers or requests; what
 * it holds stays bounded by the store's `maxKeys` (the shadow buckets are
 * ordinary buckets), and allow-listed or skipped callers get no bucket.
 */
import { Controller, Get, type ExecutionContext } from '@nestjs/common';
import { MemoryStore, RateLimit } from 'nestjs-holdup';
import { createGuardHarness, type GuardHarness } from '../utils/guard-harness.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';

const numberOf = (ctx: ExecutionContext): number =>
  Number(ctx.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers['x-caller']);

@Controller('flood')
class FloodController {
  /** A limit being rolled out: every caller's second request would be denied. */
  @RateLimit({ name: 'candidate', rate: '1/min', burst: 1, key: 'header:x-caller', shadow: true })
  @Get('shadow')
  shadow() {
    return { ok: true };
  }

  /** Skipped for even callers; the odd ones are limited. */
  @RateLimit({
    name: 'partners',
    rate: '1/min',
    burst: 1,
    key: 'header:x-caller',
    skip: (ctx) => numberOf(ctx) % 2 === 0,
  })
  @Get('skip')
  skip() {
    return { ok: true };
  }

  /** A skip predicate that throws for every call: the limit applies. */
  @RateLimit({
    name: 'broken-skip',
    rate: '1/min',
    burst: 1,
    key: 'header:x-caller',
    skip: () => {
      throw new Error('feature flags unavailable');
    },
  })
  @Get('brokenSkip')
  brokenSkip() {
    return { ok: true };
  }

  @RateLimit({ name: 'internal', rate: '1/min', burst: 1 })
  @Get('internal')
  internal() {
    return { ok: true };
  }
}

const CALLERS = 20_000;
const MAX_KEYS = 1_000;

describe('shadow, skip and allowList under a flood of distinct callers', () => {
  let h: GuardHarness;
  let store: MemoryStore;
  const logs = silenceRateLimitLogs();
  afterEach(() => h?.close());

  /** What the library said (Nest's own start-up lines left out). */
  const said = () => logs.messages().filter((line) => !line.endsWith('dependencies initialized'));
  const boot = async (options: { allowList?: string[] } = {}) => {
    store = new MemoryStore({ maxKeys: MAX_KEYS });
    h = await createGuardHarness(FloodController, { store, ...options });
  };
  /** Each caller twice; the statuses counted. */
  const flood = async (route: string, ip = (_i: number) => '203.0.113.1') => {
    const statuses: Record<number, number> = {};
    let maxSize = 0;
    for (let i = 0; i < CALLERS; i++) {
      const caller = { ip: ip(i), headers: { 'x-caller': String(i) } };
      for (let n = 0; n < 2; n++) {
        const { status } = await h.canActivate(route, caller);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
      if (i % 100 === 0) maxSize = Math.max(maxSize, store.size);
    }
    return { statuses, maxSize: Math.max(maxSize, store.size) };
  };

  it('shadow: 20,000 would-be denials, all admitted; one line for the burst and one summary; buckets within maxKeys', async () => {
    await boot();
    const { statuses, maxSize } = await flood('shadow');
    expect(statuses).toEqual({ 200: 2 * CALLERS });
    expect(maxSize).toBeLessThanOrEqual(MAX_KEYS);
    // The shadow decision is not awaited by the request: let the last ones land.
    await new Promise((resolve) => setImmediate(resolve));
    expect(said()).toEqual([expect.stringContaining('(shadow): would have denied a request')]);
    await h.close(); // says the open burst's count
    expect(said()).toEqual([
      expect.stringContaining('(shadow): would have denied a request'),
      expect.stringContaining(`${CALLERS} request(s) would have been denied in the last burst`),
    ]);
  });

  it('skip: the skipped half get no bucket and no line; the other half are limited', async () => {
    await boot();
    const { statuses, maxSize } = await flood('skip');
    expect(statuses).toEqual({ 200: CALLERS + CALLERS / 2, 429: CALLERS / 2 });
    expect(maxSize).toBeLessThanOrEqual(MAX_KEYS);
    expect(said()).toEqual([]);
  });

  it('a skip that throws on every call: limited, said once', async () => {
    await boot();
    const { statuses, maxSize } = await flood('brokenSkip');
    expect(statuses).toEqual({ 200: CALLERS, 429: CALLERS });
    expect(maxSize).toBeLessThanOrEqual(MAX_KEYS);
    expect(said()).toEqual([expect.stringContaining('skip threw (feature flags unavailable)')]);
  });

  it('allowList: 20,000 allow-listed addresses admitted with no bucket and no line; others still limited', async () => {
    await boot({ allowList: ['10.0.0.0/8'] });
    const address = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    const { statuses, maxSize } = await flood('internal', address);
    expect(statuses).toEqual({ 200: 2 * CALLERS });
    expect(maxSize).toBe(0);
    expect(said()).toEqual([]);
    expect((await h.canActivate('internal', { ip: '203.0.113.9' })).status).toBe(200);
    expect((await h.canActivate('internal', { ip: '203.0.113.9' })).status).toBe(429);
  });
});
