/**
 * Accuracy across processes: 4 Node processes, each with its own ioredis
 * client and RedisStore (Redis server time), hammer one bucket at many times
 * its rate. The total admitted must never exceed what the bucket allows over
 * the measured time, floor(burst + rate * T), and must come close to it
 * (>= 95 %): the store neither leaks nor wastes tokens under contention.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { RECOMMENDED_OPTIONS } from '../utils/redis-client.js';
import { sharedRedisUrl, uniquePrefix } from '../utils/redis-harness.js';
import { nextMessage } from '../utils/next-message.js';

const WORKER = fileURLToPath(new URL('./multi-process.worker.mjs', import.meta.url));
const BUILT = fileURLToPath(new URL('../../dist/esm/adapters/redis/index.js', import.meta.url));

const PROCESSES = 4;
const RATE = 200;
const BURST = 50;
const DURATION_MS = 3_000;

interface Done {
  type: 'done';
  admitted: number;
  denied: number;
  errors: number;
  startMs: number;
  endMs: number;
}

describe('RedisStore across processes', () => {
  const children: ChildProcess[] = [];

  afterAll(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  });

  it(`admits at most burst + rate x T, and at least 95 % of it, from ${PROCESSES} processes`, async () => {
    if (!existsSync(BUILT))
      throw new Error('dist/ is missing: run `npm run build` first (`npm test` does).');
    const env = {
      ...process.env,
      NODE_OPTIONS: '',
      REDIS_URL: sharedRedisUrl(),
      CLIENT_OPTIONS: JSON.stringify(RECOMMENDED_OPTIONS),
      KEY_PREFIX: uniquePrefix('multi-process'),
      RATE: String(RATE),
      BURST: String(BURST),
      CONCURRENCY: '4',
    };
    for (let i = 0; i < PROCESSES; i++) children.push(fork(WORKER, [], { env, stdio: 'inherit' }));
    await Promise.all(children.map((child) => nextMessage(child, 'ready')));

    const results = children.map((child) => nextMessage<Done>(child, 'done'));
    for (const child of children) child.send({ durationMs: DURATION_MS });
    const done = await Promise.all(results);

    const admitted = done.reduce((sum, d) => sum + d.admitted, 0);
    const calls = done.reduce((sum, d) => sum + d.admitted + d.denied + d.errors, 0);
    const errors = done.reduce((sum, d) => sum + d.errors, 0);
    const seconds =
      (Math.max(...done.map((d) => d.endMs)) - Math.min(...done.map((d) => d.startMs))) / 1000;
    const bound = Math.floor(BURST + RATE * seconds);
    if (process.env.HOLDUP_REPORT) {
      console.log(
        JSON.stringify({
          admitted,
          bound,
          ratio: admitted / bound,
          seconds,
          calls,
          errors,
          perProcess: done.map((d) => d.admitted),
        }),
      );
    }

    expect(calls).toBeGreaterThan(3 * (BURST + RATE * seconds)); // really well over the rate
    expect(admitted).toBeLessThanOrEqual(bound);
    expect(admitted).toBeGreaterThanOrEqual(0.95 * bound);
  }, 30_000);
});
