/**
 * The two-tier guarantee across processes: 4 Node processes, each with its
 * own ioredis client and TwoTierStore (Redis server time), offer one hot key
 * 6x its rate for several seconds. The total admitted must never exceed what
 * the bucket allows over the measured time (T from Redis TIME),
 * floor(burst + rate x T), must reach at least 90 % of it, and Redis must be
 * asked at most 0.1 times per admitted request: counted by the stores, and
 * independently by the dedicated server's INFO commandstats; and Redis must
 * have counted the 4 instances leasing the bucket (the fleet count that paces
 * their calls, issue 29).
 *
 * HOLDUP_RATE / HOLDUP_BURST / HOLDUP_DURATION_MS change the scenario,
 * HOLDUP_STORE=redis runs the same load on RedisStore instead (for the
 * comparison in the README: only the bound is checked then), HOLDUP_REPORT=1
 * prints the figures.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { TwoTierStoreStats } from 'nestjs-holdup/two-tier';
import { RECOMMENDED_OPTIONS } from '../utils/redis-client.js';
import { rawCommand, uniquePrefix } from '../utils/redis-harness.js';
import { withRedisServer } from '../utils/with-redis-server.js';
import { nextMessage } from '../utils/next-message.js';

const WORKER = fileURLToPath(new URL('./multi-process.worker.mjs', import.meta.url));
const BUILT = fileURLToPath(new URL('../../dist/esm/adapters/two-tier/index.js', import.meta.url));

const PROCESSES = 4;
const RATE = Number(process.env.HOLDUP_RATE ?? 200);
const BURST = Number(process.env.HOLDUP_BURST ?? 200);
const OFFERED_RATIO = 6;
const DURATION_MS = Number(process.env.HOLDUP_DURATION_MS ?? 5_000);
const STORE = process.env.HOLDUP_STORE === 'redis' ? 'redis' : 'two-tier';

interface Done {
  type: 'done';
  offered: number;
  admitted: number;
  denied: number;
  errors: number;
  sync: number;
  slowestMs: number;
  startMs: number;
  endMs: number;
  stats: Partial<TwoTierStoreStats> & { redisCalls: number };
  afterClose: Partial<TwoTierStoreStats> & { redisCalls: number };
}

/** Script calls the server ran (EVALSHA + EVAL), from INFO commandstats. */
async function scriptCalls(port: number): Promise<number> {
  const info = await rawCommand(port, ['INFO', 'commandstats']);
  let total = 0;
  for (const match of info.matchAll(/^cmdstat_(evalsha|eval):calls=(\d+)/gm))
    total += Number(match[2]);
  return total;
}

describe(`${STORE === 'redis' ? 'RedisStore' : 'TwoTierStore'} across processes, paced load`, () => {
  const children: ChildProcess[] = [];
  // Each worker connects its own client: the server alone.
  const redis = withRedisServer({
    client: false,
    beforeStop: () => {
      for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    },
  });

  const title =
    STORE === 'redis'
      ? 'admits at most burst + rate x T and at least 90 % of it (RedisStore, for comparison)'
      : `admits at most burst + rate x T, at least 90 % of it, with <= 0.1 Redis calls per admission, from ${PROCESSES} processes`;
  it(
    title,
    async () => {
      if (!existsSync(BUILT))
        throw new Error('dist/ is missing: run `npm run build` first (`npm test` does).');
      const server = redis.server;
      const env = {
        ...process.env,
        NODE_OPTIONS: '',
        REDIS_URL: server.url,
        CLIENT_OPTIONS: JSON.stringify(RECOMMENDED_OPTIONS),
        KEY_PREFIX: uniquePrefix('two-tier-multi'),
        RATE: String(RATE),
        BURST: String(BURST),
        OFFER: String((OFFERED_RATIO * RATE) / PROCESSES),
        INSTANCES: String(PROCESSES),
        STORE,
      };
      for (let i = 0; i < PROCESSES; i++)
        children.push(fork(WORKER, [], { env, stdio: 'inherit' }));
      await Promise.all(children.map((child) => nextMessage(child, 'ready')));
      await rawCommand(server.port, ['CONFIG', 'RESETSTAT']);

      const results = children.map((child) => nextMessage<Done>(child, 'done'));
      for (const child of children) child.send({ durationMs: DURATION_MS });
      const done = await Promise.all(results);
      const serverCalls = await scriptCalls(server.port);
      // The instances Redis counted for the hot bucket (adapters/redis/scripts/fleet.lua.ts),
      // still in the set: it outlives the last lease call by its window (2 lease TTLs at least).
      const fleet = Number(
        // Members scored +inf are not instances: the bucket's epoch.
        await rawCommand(server.port, ['ZCOUNT', `${env.KEY_PREFIX}{hot}:fleet`, '-inf', '(+inf']),
      );

      const sum = (pick: (d: Done) => number) => done.reduce((total, d) => total + pick(d), 0);
      const admitted = sum((d) => d.admitted);
      const offered = sum((d) => d.offered);
      const errors = sum((d) => d.errors);
      const storeCalls = sum((d) => d.afterClose.redisCalls);
      const seconds =
        (Math.max(...done.map((d) => d.endMs)) - Math.min(...done.map((d) => d.startMs))) / 1000;
      const bound = Math.floor(BURST + RATE * seconds);
      const report = {
        store: STORE,
        rate: RATE,
        burst: BURST,
        seconds,
        offered,
        admitted,
        bound,
        admittedOverBound: admitted / bound,
        storeCalls,
        serverScriptCalls: serverCalls,
        callsPerAdmitted: storeCalls / admitted,
        serverCallsPerAdmitted: serverCalls / admitted,
        syncShare: sum((d) => d.sync) / offered,
        leasesTaken: sum((d) => d.afterClose.leasesTaken ?? 0),
        leasedTokens: sum((d) => d.afterClose.leasedTokens ?? 0),
        returnedTokens: sum((d) => d.afterClose.returnedTokens ?? 0),
        denyCacheHits: sum((d) => d.afterClose.denyCacheHits ?? 0),
        errors,
        slowestMs: Math.max(...done.map((d) => d.slowestMs)),
        perProcess: done.map((d) => d.admitted),
        fleet,
      };
      if (process.env.HOLDUP_REPORT) console.log(JSON.stringify(report));

      expect(errors).toBe(0);
      expect(offered).toBeGreaterThanOrEqual(5 * (BURST + RATE * seconds) * 0.9); // really well over the rate
      expect(admitted).toBeLessThanOrEqual(bound);
      expect(admitted).toBeGreaterThanOrEqual(0.9 * bound);
      if (STORE === 'redis') return; // one call per decision, by design
      // Every process took part in the hot key's fleet count, and paced its calls by it.
      expect(fleet).toBe(PROCESSES);
      expect(storeCalls / admitted).toBeLessThanOrEqual(0.1);
      // Redis' own count: every script call (decisions, give-backs), whoever counted it.
      expect(serverCalls / admitted).toBeLessThanOrEqual(0.1);
    },
    60_000,
  );
});
