/**
 * The `hotKeys` summary under a flood of distinct denied callers (issue 26,
 * item 9): an attacker who mints a new identity per request, every request
 * denied. The summary is space-saving, fixed size per limit name and window:
 * it holds at most `size` x 2 (the current and the previous window) callers
 * per limit, whatever the number of callers, and still names a caller that
 * is denied more than 1/`size` of the time.
 *
 * The module's own summary (the one `RateLimiter.hottestKeys()` reads) takes
 * 1,000,000 denials of distinct callers, fed as the guard feeds it (one
 * `denied(limit name, caller, now)` per denied limit: a full request costs
 * ~15 µs here, 15 s for a million, the summary ~1 µs); then real denials
 * through `RateLimiter.consume` and the guard (HTTP-less, the guard harness)
 * reach the same summary, under the same bound.
 */
import { Controller, Get } from '@nestjs/common';
import { RateLimit, RateLimiter } from 'nestjs-holdup';
import { RateLimitEngine } from '../../lib/engine/rate-limit-engine.js';
import { createGuardHarness, type GuardHarness } from '../utils/guard-harness.js';

@Controller('search')
class SearchController {
  @RateLimit({ name: 'search', rate: '1/min', burst: 1, key: 'header:x-api-key' })
  @Get()
  search() {
    return { ok: true };
  }
}

const SIZE = 100;
const FLOOD = 1_000_000;
const WINDOW_MS = 60_000;

describe('hotKeys under a flood of distinct denied callers', () => {
  let h: GuardHarness;
  afterEach(() => h?.close());

  it(`${FLOOD.toLocaleString('en-US')} distinct denied callers: at most size x 2 held per limit, the heavy hitter still named`, async () => {
    h = await createGuardHarness(SearchController, {
      hotKeys: { size: SIZE, windowMs: WINDOW_MS },
    });
    const limiter = h.moduleRef.get(RateLimiter);
    const hotKeys = h.moduleRef.get(RateLimitEngine).hotKeys!;

    let maxCounted = 0;
    for (let i = 0; i < FLOOD; i++) {
      // 10 windows over the flood: the summary turns over, and keeps two.
      if (i % (FLOOD / 10) === 0) h.clock.advance(WINDOW_MS);
      // 2% of the flood is one caller, the rest a new caller each time.
      hotKeys.denied('login', i % 50 === 0 ? 'heavy-hitter' : `minted-${i}`, h.clock.now());
      if (i % 1_000 === 0) maxCounted = Math.max(maxCounted, hotKeys.counted);
    }
    expect(maxCounted).toBe(2 * SIZE); // full, and never more
    expect(hotKeys.counted).toBe(2 * SIZE);
    expect(limiter.hottestKeys({ limit: 'login', top: 1 })).toEqual([
      expect.objectContaining({ limit: 'login', key: 'heavy-hitter' }),
    ]);

    // Real denials, through the service (cost above the burst: denied at the
    // first try) and through the guard (each caller admitted once, then denied).
    const login = { name: 'login', rate: '1/min', burst: 1 } as const;
    for (let i = 0; i < 20_000; i++)
      expect((await limiter.consume(`minted-again-${i}`, login, { cost: 2 })).allowed).toBe(false);
    for (let i = 0; i < 2_000; i++) {
      const caller = { headers: { 'x-api-key': `guard-${i}` } };
      expect((await h.canActivate('search', caller)).status).toBe(200);
      expect((await h.canActivate('search', caller)).status).toBe(429);
    }
    expect(hotKeys.limits).toBe(2); // 'login' and 'search': one summary per limit name
    expect(hotKeys.counted).toBeLessThanOrEqual(2 * SIZE * 2);
    expect(limiter.hottestKeys({ limit: 'search', top: 1000 }).length).toBeLessThanOrEqual(
      2 * SIZE,
    );
    if (process.env.HOLDUP_REPORT)
      console.log(`hot keys: ${FLOOD + 22_000} denials, ${hotKeys.counted} callers held`);
  });
});
