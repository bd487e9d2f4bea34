import request from 'supertest';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { ManualClock, MemoryStore, RateLimit, RateLimitModule, type FailMode } from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';

@Controller('clock')
class ClockController {
  @Get()
  @RateLimit({ rate: 1, burst: 1 })
  get(): { ok: true } {
    return { ok: true };
  }
}

const UNAVAILABLE = {
  statusCode: 503,
  message: 'Rate limiting is temporarily unavailable',
  error: 'Service Unavailable',
};

/**
 * Issue 15, item 7: a clock that reads NaN, a negative time or one beyond
 * year 275760 (8.64e15 ms) is a failure like a store's (failMode decides, one
 * log line per burst), and `Retry-After` is always a valid delay-seconds.
 */
describe.each(PLATFORMS)('extreme clocks (%s)', (platform) => {
  let app: INestApplication;
  let clock: ManualClock;
  const logs = silenceRateLimitLogs();

  const boot = async (failMode: FailMode) => {
    clock = new ManualClock(1_700_000_000_000);
    app = await createApp(platform, {
      imports: [RateLimitModule.forRoot({ store: new MemoryStore(), clock, failMode })],
      controllers: [ClockController],
    });
  };
  const get = () => request(app.getHttpServer()).get('/clock');
  const logged = (spy: typeof logs.error) =>
    spy.mock.calls
      .filter(
        (_call, i) =>
          (spy.mock.contexts[i] as unknown as { context?: string }).context === 'RateLimit',
      )
      .map((call) => String(call[0]));

  afterEach(async () => {
    await app?.close();
  });

  describe.each([
    ['NaN', NaN, 'NaN'],
    ['1e300', 1e300, '1e+300'],
    ['-1', -1, '-1'],
    ['8.64e15 + 1', 8.64e15 + 1, '8640000000000001'],
  ])('a clock reading %s', (_name, reading, shown) => {
    it("failMode 'open' admits without rate-limit headers, logs once per burst, and decides again once the clock is back", async () => {
      await boot('open');
      clock.set(reading);
      for (let i = 0; i < 3; i++) {
        const res = await get();
        expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { ok: true } });
        expect(res.headers['ratelimit']).toBeUndefined();
        expect(res.headers['retry-after']).toBeUndefined();
      }
      expect(logged(logs.error)).toEqual([
        `Rate-limit store failed; applying failMode until it recovers: Rate-limit clock read ${shown}, not a time in [0, 8640000000000000] ms`,
      ]);
      clock.set(1_700_000_000_000);
      expect((await get()).status).toBe(200);
      expect(logged(logs.log)).toEqual(['Rate-limit store recovered after 3 failed decision(s)']);
      const denied = await get();
      expect(denied.status).toBe(429);
      expect(denied.headers['retry-after']).toBe('1');
    });

    it("failMode 'closed' answers 503", async () => {
      await boot('closed');
      clock.set(reading);
      for (let i = 0; i < 2; i++) {
        const res = await get();
        expect({ status: res.status, body: res.body }).toEqual({ status: 503, body: UNAVAILABLE });
        expect(res.headers['retry-after']).toBeUndefined();
      }
      expect(logged(logs.error)).toHaveLength(1);
    });
  });

  it('Retry-After is a valid delay-seconds however far ahead a bucket is: at most 2^31', async () => {
    await boot('closed');
    clock.set(8.64e15); // the last valid reading: the bucket is charged up to it
    expect((await get()).status).toBe(200);
    clock.set(0); // then the clock jumps back to 1970
    const res = await get();
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('2147483648');
  });
});
