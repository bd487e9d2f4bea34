/**
 * The fault matrix, bounded: RedisStore and TwoTierStore × every fail mode
 * they accept × the ways Redis fails (see ./faults.ts), through a real Nest
 * application over HTTP. Each cell asserts what the README promises:
 *
 * - every request is answered within `timeoutMs` plus a margin, during the
 *   fault as before it, three at a time on one key;
 * - the fail mode is honoured: `'open'` admits, `'closed'` answers 503,
 *   `'local'` admits no more than this instance's local share of the limit,
 *   however long the fault lasts and however often the store probes Redis;
 * - once Redis is healed, limiting is exact again on a fresh bucket, and Redis'
 *   own command counters show one script call per store call (nothing sent
 *   twice) — for TwoTierStore, at most one per request.
 *
 * Unhandled rejections fail the running test (jest). Each cell has its own
 * redis-server and takes about a second. HOLDUP_REPORT=1 prints one line of
 * figures per cell (for docs/reliability.md).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import request from 'supertest';
import {
  ManualClock,
  RateLimit,
  RateLimitModule,
  type FailMode,
  type RateLimitStore,
} from 'nestjs-holdup';
import { RedisStore } from 'nestjs-holdup/redis';
import { TwoTierStore } from 'nestjs-holdup/two-tier';
import { createApp } from '../utils/create-app.js';
import { connectRedisClient, RECOMMENDED_OPTIONS } from '../utils/redis-client.js';
import { uniquePrefix } from '../utils/redis-harness.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';
import { watchStalls } from '../utils/stall-watch.js';
import { withRedisServer } from '../utils/with-redis-server.js';
import { FAULTS, type RedisFault } from './faults.js';

const TIMEOUT_MS = 100;
/** Slack for a loaded 2-core CI machine; still well under two timeouts. */
const MARGIN_MS = 150;
const BURST = 4;
/** TwoTierStore's local share with `instances: 2`. */
const LOCAL_BURST = BURST / 2;
const PROBE_INTERVAL_MS = 40;
/** How long each fault lasts: several probe intervals, so that a probe that recovers too early shows. */
const FAULT_MS = 400;

@Controller('matrix')
class MatrixController {
  @RateLimit({ rate: '1/min', burst: BURST })
  @Get()
  limited() {
    return { ok: true };
  }

  @RateLimit({ rate: '1/min', burst: 3 })
  @Get('fresh')
  fresh() {
    return { ok: true };
  }
}

interface StoreKind {
  readonly name: string;
  readonly failModes: readonly FailMode[];
  create(client: Redis): RateLimitStore;
}

const STORES: readonly StoreKind[] = [
  {
    name: 'RedisStore',
    failModes: ['open', 'closed'],
    create: (client) =>
      new RedisStore({
        client,
        keyPrefix: uniquePrefix('matrix'),
        time: 'client',
        timeoutMs: TIMEOUT_MS,
      }),
  },
  {
    name: 'TwoTierStore',
    failModes: ['open', 'closed', 'local'],
    create: (client) =>
      new TwoTierStore({
        client,
        keyPrefix: uniquePrefix('matrix-tt'),
        time: 'client',
        timeoutMs: TIMEOUT_MS,
        instances: 2,
        probeIntervalMs: PROBE_INTERVAL_MS,
      }),
  },
];

const CELLS = STORES.flatMap((store) =>
  store.failModes.flatMap((failMode) =>
    FAULTS.map((fault) => [store.name, failMode, fault.name, store, fault] as const),
  ),
);

describe('the fault matrix', () => {
  let admin: Redis;
  let app: INestApplication;
  // Store failures are logged once per burst: expected here, not noise for the report.
  silenceRateLimitLogs();
  const stalls = watchStalls();
  afterAll(() => stalls.stop());
  // Each cell its own server.
  const redis = withRedisServer({
    each: true,
    client: { ...RECOMMENDED_OPTIONS, retryStrategy: () => 30 },
    quietErrors: true,
    beforeStop: async () => {
      await app?.close();
      admin?.disconnect();
    },
  });
  beforeEach(async () => {
    admin = await connectRedisClient(redis.server.url, {
      retryStrategy: () => 30,
      maxRetriesPerRequest: 50,
    });
    admin.on('error', () => undefined);
  });

  const timed = async (path: string) => {
    const started = performance.now();
    const res = await request(app.getHttpServer()).get(path);
    return { status: res.status, ms: performance.now() - started };
  };

  /** Redis answers the admin connection and the store's again. */
  const healthy = async () => {
    for (let i = 0; i < 100; i++) {
      if (redis.client.status === 'ready' && admin.status === 'ready') {
        try {
          await redis.client.ping();
          return;
        } catch {
          // not yet
        }
      }
      await sleep(30);
    }
    throw new Error('Redis did not come back');
  };

  it.each(CELLS)(
    '%s, failMode %s, Redis %s',
    async (_store, failMode, _fault, kind: StoreKind, fault: RedisFault) => {
      const clock = new ManualClock(1_700_000_000_000);
      app = await createApp('express', {
        imports: [RateLimitModule.forRoot({ store: kind.create(redis.client), clock, failMode })],
        controllers: [MatrixController],
      });

      expect((await timed('/matrix')).status).toBe(200);
      await fault.apply(redis.server, admin);

      // During the fault: answered in time (give or take the machine's own stalls), by the fail mode.
      stalls.reset();
      const during: number[] = [];
      let slowest = 0;
      const started = performance.now();
      while (performance.now() - started < FAULT_MS) {
        // Concurrent requests on one key: a request that joins another's pending call must not wait longer.
        for (const { status, ms } of await Promise.all([
          timed('/matrix'),
          timed('/matrix'),
          timed('/matrix'),
        ])) {
          expect(ms).toBeLessThan(TIMEOUT_MS + MARGIN_MS + stalls.maxMs);
          slowest = Math.max(slowest, ms);
          during.push(status);
        }
      }
      expect(during.length).toBeGreaterThanOrEqual(3);
      const admitted = during.filter((status) => status === 200).length;
      if (process.env.HOLDUP_REPORT) {
        console.log(
          JSON.stringify({
            store: kind.name,
            failMode,
            fault: fault.name,
            requests: during.length,
            admitted,
            slowestMs: Math.round(slowest),
          }),
        );
      }
      if (failMode === 'open') expect(new Set(during)).toEqual(new Set([200]));
      if (failMode === 'closed') expect(new Set(during)).toEqual(new Set([503]));
      if (failMode === 'local') {
        expect(during.every((status) => status === 200 || status === 429)).toBe(true);
        // The local share, once, whatever the probes did (the clock does not move: no refill).
        expect(admitted).toBeLessThanOrEqual(LOCAL_BURST);
      }

      await fault.heal(redis.server, admin);
      await healthy();
      // Leave time for the store to notice (probe, reconnection), then check exactness on a fresh bucket.
      await sleep(PROBE_INTERVAL_MS * 4);
      await admin.config('RESETSTAT');
      const after: number[] = [];
      for (let i = 0; i < 4; i++) after.push((await timed('/matrix/fresh')).status);
      expect(after).toEqual([200, 200, 200, 429]);
      const scriptCalls = await scriptCallsSince(admin);
      if (kind.name === 'RedisStore') expect(scriptCalls).toBe(4);
      else expect(scriptCalls).toBeLessThanOrEqual(4);
    },
  );
});

/**
 * Script executions Redis counted since the last CONFIG RESETSTAT: EVAL and
 * EVALSHA calls that did not fail (an EVALSHA answered NOSCRIPT after a
 * restart, then retried as EVAL, ran once, not twice).
 */
async function scriptCallsSince(admin: Redis): Promise<number> {
  const stats = await admin.info('commandstats');
  let calls = 0;
  for (const match of stats.matchAll(/^cmdstat_(?:eval|evalsha):(.*)$/gm)) {
    const fields = Object.fromEntries(
      match[1]!.split(',').map((field) => field.split('=') as [string, string]),
    );
    calls += Number(fields['calls'] ?? 0) - Number(fields['failed_calls'] ?? 0);
  }
  return calls;
}
