/**
 * Faults seen from a plain Node process (no jest sandbox): while its Redis is
 * frozen (SIGSTOP), thawed, frozen again and killed, and restarted, a
 * RedisStore on an ioredis client (defaults, and the recommended options) must settle every call within timeoutMs plus a
 * margin, raise no unhandled rejection or uncaught exception (real
 * `process.on` spies in the worker), recover by itself, be exact afterwards,
 * and leave nothing that keeps the process alive.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { RECOMMENDED_OPTIONS } from '../utils/redis-client.js';
import { uniquePrefix } from '../utils/redis-harness.js';
import { withRedisServer } from '../utils/with-redis-server.js';

const WORKER = fileURLToPath(new URL('./faults.worker.mjs', import.meta.url));
const BUILT = fileURLToPath(new URL('../../dist/esm/adapters/redis/index.js', import.meta.url));
const TIMEOUT_MS = 100;
/** Slack for a loaded 2-core CI machine: timers and the event loop run late. */
const MARGIN_MS = 400;

describe('RedisStore under faults, in a plain Node process', () => {
  let child: ChildProcess | undefined;
  // The worker connects its own client: the server alone, one per test.
  const redis = withRedisServer({
    each: true,
    client: false,
    beforeStop: () => {
      if (child && child.exitCode === null) child.kill('SIGKILL');
      child = undefined;
    },
  });

  it.each([
    ['ioredis defaults', {}],
    ['recommended options', RECOMMENDED_OPTIONS],
  ])(
    'with %s: settles every call, leaks no rejection, recovers and lets the process exit',
    async (_label, clientOptions) => {
      if (!existsSync(BUILT))
        throw new Error('dist/ is missing: run `npm run build` first (`npm test` does).');
      const server = redis.server;
      const worker = fork(WORKER, [], {
        env: {
          ...process.env,
          NODE_OPTIONS: '',
          REDIS_URL: server.url,
          KEY_PREFIX: uniquePrefix('faults-e2e'),
          TIMEOUT_MS: String(TIMEOUT_MS),
          CLIENT_OPTIONS: JSON.stringify(clientOptions),
        },
        stdio: 'inherit',
      });
      child = worker;
      const exited = new Promise<number | null>((resolve) =>
        worker.once('exit', (code) => resolve(code)),
      );
      const message = (type: string) =>
        new Promise<Record<string, unknown>>((resolve, reject) => {
          worker.on('message', (m: Record<string, unknown>) => m.type === type && resolve(m));
          worker.once('exit', (code) =>
            reject(new Error(`worker exited (${code}) before "${type}"`)),
          );
        });

      await message('ready');
      const done = message('done');
      await sleep(200);
      server.pause();
      await sleep(400);
      server.resume();
      await sleep(200);
      // Killed while frozen: commands already timed out now fail (or are
      // resent), long after their caller got its answer.
      server.pause();
      await sleep(300);
      await server.kill();
      await sleep(300);
      await server.restart();
      await sleep(300);
      worker.send('stop');
      const summary = await done;
      const exitedInTime = await Promise.race([
        exited.then(() => true),
        sleep(5_000).then(() => false),
      ]);
      if (process.env.HOLDUP_REPORT) console.log(JSON.stringify(summary));

      expect(summary).toMatchObject({
        unhandledRejections: 0,
        uncaughtExceptions: 0,
        otherErrors: 0,
        recovered: true,
      });
      expect(summary.slowestMs).toBeLessThanOrEqual(TIMEOUT_MS + MARGIN_MS);
      expect(summary.timeouts).toBeGreaterThan(0); // the freeze was seen
      expect(summary.storeErrors).toBeGreaterThan(0);
      expect(summary.answered).toBeGreaterThan(10);
      expect(summary.exact).toEqual([
        { allowed: true, remaining: 2, retryAfterMs: 0, resetMs: 1_000 },
        { allowed: true, remaining: 1, retryAfterMs: 0, resetMs: 2_000 },
        { allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 3_000 },
        { allowed: false, remaining: 0, retryAfterMs: 1_000, resetMs: 3_000, reason: 'limit' },
      ]);
      expect(exitedInTime).toBe(true);
      expect(await exited).toBe(0);
    },
    30_000,
  );
});
