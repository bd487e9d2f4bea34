/**
 * A client blocked by `blockDuration` that keeps retrying, once a second, as
 * clients do: the block ends when it said it would (trying does not extend
 * it), on every store. A 10 s block of a limit of 1/s, burst 2, driven by the
 * module's clock over 32 s, through HTTP.
 *
 * Before issue 26, a retry in the block's last token interval looked like a
 * fresh abuse (the bucket alone cannot tell the end of a block from a bucket
 * just emptied) and blocked the key again: 0 admitted in 32 s, Retry-After
 * going 10 → 2 and back to 10 every ~9 s, on memory and Redis. The stores
 * now mark the blocks they write, and a penalty leaves a block being served
 * as it is.
 */
import request from 'supertest';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { ManualClock, RateLimit, RateLimitModule } from 'nestjs-holdup';
import { createApp } from '../utils/create-app.js';
import { ALL_STORES, storesOfKind } from '../utils/stores.js';

@Controller('blocked')
class BlockedController {
  @RateLimit({ name: 'abuse', rate: 1, burst: 2, blockDuration: '10s' })
  @Get()
  guarded() {
    return { ok: true };
  }
}

const report = process.env.HOLDUP_REPORT === '1';

describe.each(ALL_STORES)('a blocked client retrying once a second (%s store)', (kind) => {
  const makeStore = storesOfKind(kind);
  let app: INestApplication;
  let clock: ManualClock;
  beforeEach(async () => {
    clock = new ManualClock(1_700_000_000_000);
    app = await createApp('express', {
      imports: [
        RateLimitModule.forRoot({
          clock,
          store: makeStore(`block-retries-${kind}`),
          trustProxy: true,
        }),
      ],
      controllers: [BlockedController],
    });
  });
  afterEach(() => app.close());
  const get = (from = '198.51.100.7') =>
    request(app.getHttpServer()).get('/blocked').set('x-forwarded-for', from);

  it('is admitted when the block ends, then at the rate; Retry-After counts down and never jumps back', async () => {
    // The burst, then the denial that starts a 10 s block.
    expect((await get()).status).toBe(200);
    expect((await get()).status).toBe(200);
    const first = await get();
    expect([first.status, first.headers['retry-after']]).toEqual([429, '10']);

    const seen: string[] = [];
    let admitted = 0;
    for (let second = 1; second <= 32; second++) {
      clock.advance(1_000);
      const res = await get();
      if (res.status === 200) admitted++;
      seen.push(res.status === 200 ? '200' : `429:${res.headers['retry-after']}`);
    }
    if (report) console.log(`${kind}: ${admitted} admitted in 32 s; ${seen.join(' ')}`);
    // Denied with 9, 8, ..., 1 s left, admitted from the block's end on (one token a second).
    expect(seen).toEqual([
      ...Array.from({ length: 9 }, (_, n) => `429:${9 - n}`),
      ...Array<string>(23).fill('200'),
    ]);
    expect(admitted).toBe(23);
  });

  it('one that abuses again after its block is blocked again, and a retry just before that block ends does not extend it', async () => {
    for (let i = 0; i < 3; i++) await get();
    clock.advance(10_000);
    expect((await get()).status).toBe(200); // the block is over: one token
    const again = await get(); // and over the limit again at once
    expect([again.status, again.headers['retry-after']]).toEqual([429, '10']);
    clock.advance(9_999);
    const late = await get(); // 1 ms before that block ends
    expect([late.status, late.headers['retry-after']]).toEqual([429, '1']);
    clock.advance(1);
    expect((await get()).status).toBe(200);
  });
});
