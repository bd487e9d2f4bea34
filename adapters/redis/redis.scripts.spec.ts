/**
 * The Lua scripts driven directly, one operation each (their KEYS and ARGV
 * are documented at the top of each `scripts/*.lua.ts`): reply shapes,
 * receipts, refunds, and how values and expiries are written. Decisions
 * themselves are checked against the algorithm by redis.lua-scenarios.spec.ts
 * and the store contract.
 */
import type { Redis } from 'ioredis';
import { uniquePrefix } from '../../test/utils/redis-harness.js';
import { withRedisServer } from '../../test/utils/with-redis-server.js';
import { redisKey } from './redis-keys.js';
import { SCRIPTS, type ScriptName } from './scripts/index.js';

/** `INFO commandstats` as `{ evalsha: 12, ... }` (calls per command). */
async function commandCalls(client: Redis): Promise<Record<string, number>> {
  const info = await client.info('commandstats');
  const calls: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
    calls[match[1]!] = Number(match[2]);
  return calls;
}

/**
 * Padding (ARGV[2]) for scripts run in the caller's clock: their keys then
 * expire in real time (`PX`, TAT minus now), a few hundred ms for these
 * buckets, and a loaded machine can stall that long between two calls of a
 * test. A minute keeps every key a test reads back; replies do not show it.
 */
const KEEP = '60000';

describe('RedisStore scripts', () => {
  // Its own server: one test counts the commands the server ran.
  const redis = withRedisServer();
  let prefix: string;

  beforeEach(() => {
    prefix = uniquePrefix('scripts');
  });

  /** One script on one key; `argv` as its header documents it. */
  const runOn =
    (key: string) =>
    (script: ScriptName, ...argv: string[]) =>
      redis.client.eval(SCRIPTS[script].source, 1, key, ...argv) as Promise<(string | number)[]>;

  it('has one script per operation, each documenting its KEYS and ARGV', () => {
    expect(Object.keys(SCRIPTS).sort()).toEqual([
      'block',
      'block_window',
      'consume',
      'consume_batch',
      'consume_one',
      'evaluate',
      'lease',
      'peek',
      'refund',
      'settle',
    ]);
    for (const script of Object.values(SCRIPTS)) {
      expect(script.source.startsWith(`--[[\n  ${script.name}: `)).toBe(true);
      expect(script.source).toContain(script.name === 'consume_one' ? 'KEYS[1]' : 'KEYS[i]');
      expect(script.source).toContain('ARGV[1]   now');
      expect(script.sha).toMatch(/^[0-9a-f]{40}$/);
    }
    expect(new Set(Object.values(SCRIPTS).map((script) => script.sha)).size).toBe(10);
  });

  it('sets value and expiry in one SET ... PXAT on Redis 7+, and falls back on SET + PEXPIREAT before', async () => {
    // consume: now (server time), padding, receipts, then rate, burst, cost.
    const run = (source: string, key: string) =>
      redis.client.eval(source, 1, key, '', '0', '0', '1', '10', '3');
    // As a server without REDIS_VERSION_NUM (before 7.0) runs it.
    const detection = 'local modern = redis.REDIS_VERSION_NUM ~= nil';
    for (const script of Object.values(SCRIPTS)) expect(script.source).toContain(detection);
    const preSeven = (script: string) => script.replace(detection, 'local modern = false');
    await redis.client.config('RESETSTAT');
    for (const [source, name] of [
      [SCRIPTS.consume.source, 'pxat'],
      [preSeven(SCRIPTS.consume.source), 'pexpireat'],
      [SCRIPTS.consume_one.source, 'one-pxat'],
      [preSeven(SCRIPTS.consume_one.source), 'one-pexpireat'],
    ] as const) {
      const key = redisKey(prefix, name);
      await run(source, key);
      const [base, offset] = (await redis.client.get(key))!.split(':').map(Number) as [
        number,
        number,
      ];
      expect(Number(await redis.client.call('PEXPIRETIME', key))).toBe(base + Math.ceil(offset));
    }
    const calls = await commandCalls(redis.client);
    expect(calls['set']).toBe(4);
    expect(calls['pexpireat']).toBe(2); // the pre-7.0 paths only
  });

  it('refunds exactly when untouched, and only its own cost when charged since', async () => {
    // The refund script, driven directly (the Cluster path uses it with receipts).
    const key = redisKey(prefix, 'refund');
    const run = runOn(key);
    const charged = await run('consume', '1000', KEEP, '1', '10', '5', '2'); // frame 1000, tat 200 in it
    const [previous, written] = charged.slice(5, 7) as [string, string];
    expect([previous, written]).toEqual(['', '1000:200']);
    await run('refund', '1000', KEEP, '10', '5', '2', written, previous);
    expect(await redis.client.exists(key)).toBe(0); // put back: no key, full bucket

    await redis.client.set(key, '1000:500', 'PX', 60_000);
    const answer = await run('refund', '1000', KEEP, '10', '5', '2', '1000:200', ''); // someone charged since
    expect(await redis.client.get(key)).toBe('1000:300');
    expect(answer).toEqual([1, 1, 2, 0, 300]);
    await run('refund', '1000', KEEP, '10', '5', '9', '1000:200', '');
    expect(await redis.client.exists(key)).toBe(0); // never below now

    // A previous value is put back verbatim, and read in whatever frame comes next.
    await run('consume', '1000', KEEP, '0', '10', '5', '1'); // 1000:100
    const again = await run('consume', '1050.5', KEEP, '1', '10', '5', '1'); // frame 1050: tat 150 (100 - 50 + 100)
    expect(again.slice(5, 7)).toEqual(['1000:100', '1050:150']);
    await run('refund', '1050.5', KEEP, '10', '5', '1', '1050:150', '1000:100');
    expect(await redis.client.get(key)).toBe('1000:100');
    expect(await run('peek', '1050.5', '10', '5')).toEqual([1, 1, 4, 0, '49.5']);
  });

  it('consume_one answers what consume answers, reply for reply, on the same key histories', async () => {
    const steps: [string, string, string, string][] = [
      ['1000.25', '4', '2', '1'],
      ['1000.25', '4', '2', '1'],
      ['1000.25', '4', '2', '1'], // denied
      ['1000.25', '4', '2', '3'], // cost above the burst
      ['1100', '3', '2', '1'], // a rate that makes charge() round up
      ['1100', '1e-3', '1', '1'],
      ['999', '4', '2', '1'], // the clock went back
      ['5000', '4', '2', '2'],
    ];
    const general = runOn(redisKey(prefix, 'same-general'));
    const one = runOn(redisKey(prefix, 'same-one'));
    for (const [now, rate, burst, cost] of steps) {
      const expected = await general('consume', now, KEEP, '0', rate, burst, cost);
      expect({ now, answer: await one('consume_one', now, KEEP, '0', rate, burst, cost) }).toEqual({
        now,
        answer: expected,
      });
      expect(await redis.client.get(redisKey(prefix, 'same-one'))).toBe(
        await redis.client.get(redisKey(prefix, 'same-general')),
      );
    }
  });

  it('a lease of no extra token answers through consume_one what the lease script answers (a cold key of TwoTierStore)', async () => {
    const lease = runOn(redisKey(prefix, 'lease-general'));
    const one = runOn(redisKey(prefix, 'lease-one'));
    for (const [now, cost] of [
      ['1000.25', '1'],
      ['1000.25', '1'],
      ['1000.25', '1'],
      ['1100', '2'],
    ] as const) {
      const expected = await lease('lease', now, KEEP, '0', '4', '2', cost, '0');
      // The runner's layout for a lease (maxExtra last); consume_one reads up to the cost, and the runner adds the extras.
      expect([...(await one('consume_one', now, KEEP, '0', '4', '2', cost, '0')), 0]).toEqual(
        expected,
      );
    }
  });

  it('answers receipts only when asked, and numbers as integers when exact', async () => {
    const key = redisKey(prefix, 'reply-shape');
    const run = runOn(key);
    // allowed, then per key: state, remaining, retryAfterMs, resetMs [, previous, written] [, extras]
    expect(await run('consume', '1000.25', KEEP, '0', '4', '2', '1')).toEqual([1, 1, 1, 0, 250]);
    expect(await run('consume', '1000.25', KEEP, '1', '4', '2', '1')).toEqual([
      1,
      1,
      0,
      0,
      500,
      '1000:250.25',
      '1000:500.25',
    ]);
    expect(await run('consume', '1000.25', KEEP, '0', '4', '2', '1')).toEqual([0, 0, 0, 250, 500]);
    expect(await run('consume', '1000.25', KEEP, '0', '4', '2', '3')).toEqual([
      0,
      2,
      0,
      'inf',
      500,
    ]);
    expect(await run('evaluate', '1000.25', '3', '2', '1')).toEqual([
      0,
      0,
      0,
      '166.66666666666674',
      500,
    ]); // charge() rounds up
    await redis.client.del(key);
    // A lease answers the decision of a plain consume, then the extras taken.
    expect(await run('lease', '1000.25', KEEP, '0', '4', '2', '1', '5')).toEqual([
      1, 1, 1, 0, 250, 1,
    ]);
    expect(await redis.client.get(key)).toBe('1000:500.25');
    expect(await run('lease', '1000.25', KEEP, '1', '4', '2', '0', '5')).toEqual([
      1,
      1,
      0,
      0,
      500,
      '1000:500.25',
      '1000:500.25',
      0,
    ]);
  });

  it('peeks without writing, answering allowed 0 only for a bucket past its capacity', async () => {
    const key = redisKey(prefix, 'peek');
    const run = runOn(key);
    expect(await run('peek', '1000', '1', '1')).toEqual([1, 1, 1, 0, 0]);
    expect(await redis.client.exists(key)).toBe(0);
    // A TAT 5 s ahead in a bucket of 1 s (a burst that shrank): even a cost of 0 is denied.
    await redis.client.set(key, '1000:5000', 'PX', 60_000);
    expect(await run('peek', '1000', '1', '1')).toEqual([0, 0, 0, 4000, 5000]);
    expect(await redis.client.get(key)).toBe('1000:5000');
  });

  it('reads every key before writing any, when a request names one bucket twice', async () => {
    const key = redisKey(prefix, 'twice');
    const twice = (script: ScriptName, ...argv: string[]) =>
      redis.client.eval(SCRIPTS[script].source, 2, key, key, ...argv) as Promise<
        (string | number)[]
      >;
    // Both checks decide from the same stored value; the last write wins.
    expect(await twice('consume', '1000', KEEP, '0', '10', '5', '1', '10', '5', '2')).toEqual([
      1, 1, 4, 0, 100, 1, 3, 0, 200,
    ]);
    expect(await redis.client.get(key)).toBe('1000:200');
    expect(
      await twice('refund', '1000', KEEP, '10', '5', '1', '', '', '10', '5', '1', '', ''),
    ).toEqual([1, 1, 4, 0, 100, 1, 4, 0, 100]);
    expect(await redis.client.get(key)).toBe('1000:100');
  });
});
