/**
 * `RateLimiter.acquire()` across processes: 4 Node processes, each with its
 * own client, RedisStore (Redis server time) and 4 callers looping on
 * acquire() for one key at 50/s. Every token is reserved in Redis, so
 * together they proceed at most burst + rate × T times in T (from the first
 * call to the last proceeding caller) and, since somebody always waits, at
 * least 95 % of that: no polling gaps, no double grants.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { RECOMMENDED_OPTIONS } from '../utils/redis-client.js';
import { sharedRedisUrl, uniquePrefix } from '../utils/redis-harness.js';
import { nextMessage } from '../utils/next-message.js';

const WORKER = fileURLToPath(new URL('./acquire.worker.mjs', import.meta.url));
const BUILT = fileURLToPath(new URL('../../dist/esm/lib/index.js', import.meta.url));
const PROCESSES = 4;
const RATE = 50;
const BURST = 10;
const DURATION_MS = 3_000;

describe('RateLimiter.acquire across processes (RedisStore)', () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  });

  it(`${PROCESSES} processes at ${RATE}/s proceed at most burst + rate x T times, and at least 95 % of it`, async () => {
    if (!existsSync(BUILT))
      throw new Error('dist/ is missing: run `npm run build` first (`npm test` does).');
    const env = {
      ...process.env,
      NODE_OPTIONS: '',
      REDIS_URL: sharedRedisUrl(),
      CLIENT_OPTIONS: JSON.stringify(RECOMMENDED_OPTIONS),
      KEY_PREFIX: uniquePrefix('acquire-processes'),
      RATE: String(RATE),
      BURST: String(BURST),
      CONCURRENCY: '4',
    };
    for (let i = 0; i < PROCESSES; i++) children.push(fork(WORKER, [], { env, stdio: 'inherit' }));
    await Promise.all(children.map((child) => nextMessage(child, 'ready')));
    const results = children.map((child) =>
      nextMessage<{ resolvedAt: number[]; errors: number }>(child, 'done'),
    );
    const startMs = Date.now();
    for (const child of children) child.send({ durationMs: DURATION_MS });
    const done = await Promise.all(results);

    const resolvedAt = done.flatMap((d) => d.resolvedAt);
    expect(done.reduce((sum, d) => sum + d.errors, 0)).toBe(0);
    const T = (Math.max(...resolvedAt) - startMs) / 1000;
    const allowed = Math.floor(BURST + RATE * T);
    expect(resolvedAt.length).toBeLessThanOrEqual(allowed);
    expect(resolvedAt.length).toBeGreaterThanOrEqual(0.95 * allowed);
  });
});
