/**
 * Redis failures seen from a plain Node process (no jest sandbox): a
 * TwoTierStore under steady load (hot keys on leases, a stream of cold keys)
 * while its Redis is killed and restarted, then frozen (SIGSTOP) and thawed.
 *
 * With `failMode: 'local'` every decision is answered (none rejects),
 * none waits longer than timeoutMs plus a margin, the store switches to its
 * local fallback within timeoutMs of the failure and back to Redis within a
 * few seconds of its return, with no unhandled rejection or uncaught
 * exception (real `process.on` spies in the worker), and the process exits
 * by itself afterwards. With `'open'` (or `'closed'`) decisions reject with
 * RateLimitStoreError instead, for the module to resolve.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { TwoTierStoreStats } from 'nestjs-holdup/two-tier';
import { RECOMMENDED_OPTIONS } from '../utils/redis-client.js';
import { uniquePrefix } from '../utils/redis-harness.js';
import { withRedisServer } from '../utils/with-redis-server.js';

const WORKER = fileURLToPath(new URL('./faults.worker.mjs', import.meta.url));
const BUILT = fileURLToPath(new URL('../../dist/esm/adapters/two-tier/index.js', import.meta.url));
const TIMEOUT_MS = 100;
/** Slack for a loaded 2-core CI machine: timers and the event loop run late. */
const MARGIN_MS = 400;
/** Default probeIntervalMs (1 s) plus ioredis' reconnect and the same slack. */
const RECOVERY_MS = 3_000;

interface Summary {
  answered: number;
  admitted: number;
  sync: number;
  storeErrors: number;
  otherErrors: number;
  slowestMs: number;
  transitions: [number, boolean][];
  stats: TwoTierStoreStats;
  unhandledRejections: number;
  uncaughtExceptions: number;
}

describe('TwoTierStore under Redis faults, in a plain Node process', () => {
  let child: ChildProcess | undefined;
  // The worker connects its own client: the server alone, one per test.
  const redisServer = withRedisServer({
    each: true,
    client: false,
    beforeStop: () => {
      if (child && child.exitCode === null) child.kill('SIGKILL');
      child = undefined;
    },
  });

  const run = async (clientOptions: object, failMode: 'local' | 'open') => {
    if (!existsSync(BUILT))
      throw new Error('dist/ is missing: run `npm run build` first (`npm test` does).');
    const redis = redisServer.server;
    const worker = fork(WORKER, [], {
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        REDIS_URL: redis.url,
        KEY_PREFIX: uniquePrefix('two-tier-faults'),
        TIMEOUT_MS: String(TIMEOUT_MS),
        CLIENT_OPTIONS: JSON.stringify(clientOptions),
        FAIL_MODE: failMode,
      },
      stdio: 'inherit',
    });
    child = worker;
    const exited = new Promise<number | null>((resolve) =>
      worker.once('exit', (code) => resolve(code)),
    );
    const message = <T>(type: string) =>
      new Promise<T>((resolve, reject) => {
        worker.on('message', (m: { type: string }) => m.type === type && resolve(m as T));
        worker.once('exit', (code) =>
          reject(new Error(`worker exited (${code}) before "${type}"`)),
        );
      });

    await message('ready');
    const done = message<Summary>('done');
    const actions: Record<string, number> = {};
    await sleep(300);
    actions.killed = Date.now();
    await redis.kill();
    await sleep(600);
    await redis.restart();
    actions.restarted = Date.now();
    await sleep(RECOVERY_MS);
    actions.paused = Date.now();
    redis.pause();
    await sleep(600);
    redis.resume();
    actions.resumed = Date.now();
    await sleep(RECOVERY_MS);
    worker.send('stop');
    const summary = await done;
    const exitedInTime = await Promise.race([
      exited.then(() => true),
      sleep(5_000).then(() => false),
    ]);
    return { summary, actions, exitedInTime, exitCode: exitedInTime ? await exited : undefined };
  };

  it.each([
    ['ioredis defaults', {}],
    ['recommended options', RECOMMENDED_OPTIONS],
  ])(
    "failMode 'local', %s: falls back within timeoutMs, never rejects or hangs, returns to Redis by itself",
    async (_label, clientOptions) => {
      const { summary, actions, exitedInTime, exitCode } = await run(clientOptions, 'local');
      const after = (at: number, degraded: boolean) =>
        summary.transitions.find(([time, state]) => time >= at && state === degraded)?.[0];
      const report = {
        toFallbackAfterKillMs: after(actions.killed!, true)! - actions.killed!,
        toRedisAfterRestartMs: after(actions.restarted!, false)! - actions.restarted!,
        toFallbackAfterPauseMs: after(actions.paused!, true)! - actions.paused!,
        toRedisAfterResumeMs: after(actions.resumed!, false)! - actions.resumed!,
        ...summary,
      };
      if (process.env.HOLDUP_REPORT) console.log(JSON.stringify(report));

      expect(summary).toMatchObject({
        unhandledRejections: 0,
        uncaughtExceptions: 0,
        otherErrors: 0,
        storeErrors: 0,
      });
      expect(summary.answered).toBeGreaterThan(100);
      expect(summary.slowestMs).toBeLessThanOrEqual(TIMEOUT_MS + MARGIN_MS);
      // Two outages, two fallbacks, two returns, and the store ended on Redis.
      expect(summary.stats).toMatchObject({ fallbacks: 2, recoveries: 2, degraded: false });
      expect(summary.transitions.map(([, degraded]) => degraded)).toEqual([
        true,
        false,
        true,
        false,
      ]);
      expect(report.toFallbackAfterKillMs).toBeLessThanOrEqual(TIMEOUT_MS + MARGIN_MS);
      expect(report.toFallbackAfterPauseMs).toBeLessThanOrEqual(TIMEOUT_MS + MARGIN_MS);
      expect(report.toRedisAfterRestartMs).toBeLessThanOrEqual(RECOVERY_MS);
      expect(report.toRedisAfterResumeMs).toBeLessThanOrEqual(RECOVERY_MS);
      expect(summary.stats.fallbackDecisions).toBeGreaterThan(0);
      expect(exitedInTime).toBe(true);
      expect(exitCode).toBe(0);
    },
    40_000,
  );

  it("failMode 'open': rejects with RateLimitStoreError only, never hangs, leaks no rejection", async () => {
    const { summary, exitedInTime, exitCode } = await run(
      { enableOfflineQueue: false, maxRetriesPerRequest: 1 },
      'open',
    );
    if (process.env.HOLDUP_REPORT) console.log(JSON.stringify(summary));
    expect(summary).toMatchObject({
      unhandledRejections: 0,
      uncaughtExceptions: 0,
      otherErrors: 0,
    });
    expect(summary.storeErrors).toBeGreaterThan(0);
    expect(summary.slowestMs).toBeLessThanOrEqual(TIMEOUT_MS + MARGIN_MS);
    expect(summary.stats).toMatchObject({ fallbacks: 0, fallbackDecisions: 0, degraded: false });
    expect(summary.transitions).toEqual([]);
    expect(exitedInTime).toBe(true);
    expect(exitCode).toBe(0);
  }, 40_000);
});
