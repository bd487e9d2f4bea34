/**
 * Concurrency slots across a Redis stall (issue 26, item 1): `concurrency: 2`
 * on 10 keys under load, `timeoutMs` 100, the store's redis-server frozen
 * (SIGSTOP) for 300 ms and then for 1.5 s. Acquisitions sent during the
 * stall time out (the fail mode admits the calls) but Redis runs them when it
 * wakes; before the fix nobody released them, and every key stayed full for
 * `leaseTimeout` (5 min): 20 slots left, 20 of 20 probe requests refused.
 *
 * What is asserted, after each stall: once the calls have ended, no slot is
 * left in Redis within {@link BOUND_MS} (the retry interval's cap plus the
 * store's timeout, with slack for a loaded machine), and 20 probe requests
 * held at once (2 per key) are all admitted. Also: no unhandled rejection,
 * and the release failures are said once per burst, not per request.
 * HOLDUP_REPORT=1 prints the figures (for docs/reliability.md).
 */
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Controller, Get, Logger, Query, type INestApplication } from '@nestjs/common';
import { jest } from '@jest/globals';
import { RateLimit, RateLimitModule } from 'nestjs-holdup';
import { RedisStore } from 'nestjs-holdup/redis';
import { MAX_RETRY_MS } from '../../lib/concurrency/slot-releases.js';
import { createApp } from '../utils/create-app.js';
import { uniquePrefix } from '../utils/redis-harness.js';
import { slotsHeldInRedis, statusOf, withFaultyRedis } from '../utils/redis-faults.js';
import { watchStalls } from '../utils/stall-watch.js';

const TIMEOUT_MS = 100;
const KEYS = 10;
const CONCURRENCY = 2;
/** Once the calls have ended and Redis answers: the retry cap, one store timeout, slack for a loaded 2-core machine. */
const BOUND_MS = MAX_RETRY_MS + TIMEOUT_MS + 400;

let release!: () => void;
let held: Promise<void> = Promise.resolve();

@Controller('stall')
class StallController {
  @RateLimit({ name: 'slots', concurrency: CONCURRENCY, key: 'header:x-api-key' })
  @Get()
  async work(@Query('hold') hold?: string) {
    if (hold === '1') await held;
    else await sleep(5);
    return { ok: true };
  }
}

const get = (port: number, apiKey: string, agent: http.Agent, hold = false) =>
  statusOf(port, hold ? '/stall?hold=1' : '/stall', apiKey, agent);

describe('concurrency slots across a Redis stall (SIGSTOP)', () => {
  let app: INestApplication;
  let port: number;
  let keyPrefix: string;
  let warn: jest.SpiedFunction<Logger['warn']>;
  let silenced: jest.SpiedFunction<Logger['error']>[];
  const redis = withFaultyRedis({ beforeStop: () => app?.close() });

  beforeAll(async () => {
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    silenced = [jest.spyOn(Logger.prototype, 'error'), jest.spyOn(Logger.prototype, 'log')].map(
      (spy) => spy.mockImplementation(() => undefined),
    );
    keyPrefix = uniquePrefix('slot-stall');
    const store = new RedisStore({ client: redis.client, keyPrefix, timeoutMs: TIMEOUT_MS });
    app = await createApp('express', {
      imports: [RateLimitModule.forRoot({ store })],
      controllers: [StallController],
    });
    await app.listen(0, '127.0.0.1');
    port = Number(new URL((await app.getUrl()).replace('[::1]', '127.0.0.1')).port);
  });
  afterAll(() => {
    warn.mockRestore();
    for (const spy of silenced) spy.mockRestore();
  });

  /** Slots held in Redis, every key. */
  const slotsInRedis = () => slotsHeldInRedis(redis.admin, keyPrefix);

  it.each([300, 1_500])('a %d ms stall under load leaves no slot behind', async (stallMs) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    let loading = true;
    let requests = 0;
    // 3 clients per key, one request after another: more than the 2 slots a key has.
    const load = Array.from({ length: KEYS * 3 }, async (_, i) => {
      while (loading) {
        await get(port, `key-${i % KEYS}`, agent);
        requests++;
      }
    });
    await sleep(150);
    redis.server.pause();
    await sleep(stallMs);
    redis.server.resume();
    await sleep(150);
    loading = false;
    await Promise.all(load);
    const stalls = watchStalls(); // the bound below is give or take the machine's own stalls
    const ended = performance.now();

    let left = await slotsInRedis();
    const leftAtEnd = left;
    while (left > 0 && performance.now() - ended < BOUND_MS * 3) {
      await sleep(20);
      left = await slotsInRedis();
    }
    const freedMs = performance.now() - ended;
    const stalledMs = stalls.maxMs;
    stalls.stop();

    // 20 probes held at once, 2 per key: all admitted only if no key has a slot left.
    held = new Promise<void>((resolve) => (release = resolve));
    const probes = Array.from({ length: KEYS * CONCURRENCY }, (_, i) =>
      get(port, `key-${i % KEYS}`, agent, true),
    );
    while ((await slotsInRedis()) < KEYS * CONCURRENCY && performance.now() - ended < 10_000) {
      await sleep(10);
    }
    release();
    const statuses = await Promise.all(probes);
    const admitted = statuses.filter((status) => status === 200).length;
    agent.destroy();
    if (process.env.HOLDUP_REPORT) {
      console.log(
        JSON.stringify({
          stallMs,
          requests,
          slotsLeftWhenCallsEnded: leftAtEnd,
          slotsLeft: left,
          freedMs: Math.round(freedMs),
          probesAdmitted: `${admitted} of ${statuses.length}`,
        }),
      );
    }

    expect(left).toBe(0);
    expect(freedMs).toBeLessThan(BOUND_MS + stalledMs);
    expect(admitted).toBe(KEYS * CONCURRENCY);
    expect(redis.unhandled).toEqual([]);
    // Said once per burst, not once per request.
    const said = warn.mock.calls.filter(([message]) =>
      String(message).includes('concurrency slot'),
    );
    expect(said.length).toBeLessThanOrEqual(4);
  });
});
