/**
 * Paces (issue 29, `scripts/pace.lua.ts`): a share of a bucket's rate that
 * `RedisStore.lease` grants an instance of a fleet, charged to the bucket in
 * advance and spent by the instance as it comes due. On a standalone Redis,
 * in client time: each call's `now` is the time the script works in.
 */
import type { Redis } from 'ioredis';
import { uniquePrefix } from '../../test/utils/redis-harness.js';
import { ON_TEST_CLOCK } from '../../test/utils/test-clock-store-options.js';
import { connectSharedClient } from '../../test/utils/redis-client.js';
import { RedisStore, type LeaseCheck } from './index.js';
import type { PaceAsk } from './lease.interface.js';
import { redisKey } from './redis-keys.js';
import { check } from '../../test/utils/checks.js';

const RATE = 10;
const BURST = 100;

describe('RedisStore paces (standalone)', () => {
  let client: Redis;
  let prefix: string;
  let store: RedisStore;

  beforeAll(async () => {
    client = await connectSharedClient();
  });
  afterAll(async () => {
    await client.quit();
  });
  beforeEach(() => {
    prefix = uniquePrefix('pace');
    store = new RedisStore({ client, keyPrefix: prefix, ...ON_TEST_CLOCK });
  });
  afterEach(() => store.close());

  /**
   * What instance `id` asks at `now`: `ask` tokens/s, no cost, and the demand weight it tells
   * (`weight`: what the others read of it until its next call; by default ask / RATE).
   */
  const pace = async (
    id: string,
    now: number,
    ask: number,
    told: Partial<PaceAsk> = {},
    windowMs = 10_000,
    weight = ask / RATE,
  ) => {
    const asked: LeaseCheck = {
      ...check('hot', RATE, BURST, 0),
      maxExtra: 0,
      weight,
      pace: { ask, tokens: 10, minMs: 100, maxMs: 30_000, sureMs: 1_000, instances: 2, ...told },
    };
    const result = await store.lease({
      checks: [asked],
      now,
      fleet: { id, windowMs },
    });
    const [rate, ms, lump] = [result.paces![0]!, result.paceMs![0]!, result.paceLumps![0]!];
    return { rate, ms, lump, savings: result.paceSavings![0]! };
  };
  /**
   * Tokens in the bucket at `now`, negative when paces are charged ahead of it (a request for
   * the whole burst, denied, tells how far the bucket is from full, and changes nothing).
   */
  const level = async (now: number) => {
    const answer = await store.consume({ checks: [check('hot', RATE, BURST, BURST)], now });
    expect(answer.allowed).toBe(false);
    return BURST - answer.decisions[0]!.retryAfterMs / (1000 / RATE);
  };
  /** The live paces' rates in the bucket's fleet set, by instance. */
  const paces = async (now: number) => {
    const members = await client.zrange(
      `${redisKey(prefix, 'hot')}:fleet`,
      '0',
      '-1',
      'WITHSCORES',
    );
    const live: Record<string, number> = {};
    for (let i = 0; i < members.length; i += 2) {
      // '!<rate>:<savings>:<since>:<id>'
      const [rate, , , ...id] = members[i]!.slice(1).split(':');
      if (members[i]!.startsWith('!') && Number(members[i + 1]) > now)
        live[id.join(':')] = Number(rate);
    }
    return live;
  };
  const sum = (rates: Record<string, number>) => Object.values(rates).reduce((a, b) => a + b, 0);
  /**
   * The bucket's fleet as one that started a minute ago (its epoch member): past its first
   * window, it expects no instance configured and not counted yet.
   */
  const settled = () => client.zadd(`${redisKey(prefix, 'hot')}:fleet`, '+inf', '~-60000');

  it('grants its demand while the fleet is under the rate, charged to the bucket in advance', async () => {
    // Alone, and under the rate: its demand, for as long as it takes to bring 10 tokens (unsure,
    // 1 of 2 instances counted: 1 s at most), and at once up to twice that from the bucket.
    expect(await pace('a', 0, 4)).toEqual({ rate: 4, ms: 1_000, lump: 20, savings: 20 });
    // The bucket also stays below full by what the pace may save: 4/s over half the 10 s window.
    expect(await level(0)).toBeCloseTo(BURST - 20 - 4 - 20);
    expect(await paces(0)).toEqual({ a: 4 });
  });

  it('shares the rate by demand once over it, and the live paces never add up to more', async () => {
    await settled();
    const first = await pace('a', 0, 8);
    expect(first.rate).toBe(8); // alone: its demand
    // b asks as much: over the rate now, but a holds 8 of 10 for its pace.
    const second = await pace('b', 10, 8);
    expect(second.rate).toBe(2);
    expect(sum(await paces(10))).toBeLessThanOrEqual(RATE);
    // a renews (the fleet known now): half the rate; b, next, takes the half a left.
    expect((await pace('a', first.ms - 50, 8)).rate).toBeCloseTo(5);
    expect((await pace('b', first.ms - 40, 8)).rate).toBeCloseTo(5);
    expect(sum(await paces(first.ms - 40))).toBeLessThanOrEqual(RATE + 1e-9);
  });

  it('leaves a young fleet the shares of the instances configured and not counted yet', async () => {
    // a alone of 2, asking 8/s (weight 0.8): the other is taken to weigh the lower median of a's
    // weight and an even share (0.5), so a's share is 10 x 0.8 / 1.3, and the rest is kept.
    expect((await pace('a', 0, 8)).rate).toBeCloseTo((RATE * 0.8) / 1.3);
    // A fleet past its first window expects nobody: alone, a takes its demand.
    prefix = uniquePrefix('pace');
    store = new RedisStore({ client, keyPrefix: prefix, ...ON_TEST_CLOCK });
    await settled();
    expect((await pace('a', 0, 8)).rate).toBe(8);
  });

  it('weighs an instance counted but not measured yet (a first sighting) as a typical one', async () => {
    await settled();
    const three = { instances: 3 };
    await pace('a', 0, 4, three);
    // b's first sighting finds a leasing the bucket: counted, its demand not known yet.
    const sighting: LeaseCheck = {
      ...check('hot', RATE, BURST, 1),
      maxExtra: 0,
      joinExtra: 4,
      joinCounts: false,
    };
    await store.lease({ checks: [sighting], now: 5, fleet: { id: 'b', windowMs: 10_000 } });
    // c (0.8): b weighs the lower median of 1/3, 0.8 and a's 0.4, so the load is 1.6 and c's
    // share 5 (counted as nothing, b would leave c 6 of the 6 a leaves). Sure (the fleet over
    // the rate, more than one instance counted): as long as 10 tokens take, 2 s.
    expect(await pace('c', 10, 8, three)).toMatchObject({
      rate: expect.closeTo(5),
      ms: expect.closeTo(2_000),
    });
  });

  it('takes a share as sure once another instance is counted, though fewer than configured', async () => {
    await settled();
    const four = { instances: 4 };
    const first = await pace('a', 0, 8, four);
    expect([first.rate, first.ms]).toEqual([8, 1_000]); // alone: unsure, 1 s at most
    await pace('b', 10, 8, four);
    // a renews knowing b: half the rate, for as long as 10 tokens take at 5/s (not 1 s).
    expect(await pace('a', 950, 8, four)).toMatchObject({
      rate: expect.closeTo(5),
      ms: expect.closeTo(2_000),
    });
  });

  it('answers a wait, not a pace, while the others hold the rate: until the first of theirs ends', async () => {
    await settled();
    const held = await pace('a', 0, 20);
    expect(held.rate).toBe(RATE);
    expect(await pace('b', 100, 5)).toEqual({ rate: 0, ms: held.ms - 100, lump: 0, savings: 0 });
    expect(await paces(100)).toEqual({ a: RATE });
  });

  it('keeps an instance answered a wait counted until the wait ends, longer than the window', async () => {
    await settled();
    // A window of 500 ms. a holds the whole rate for 1 s (unsure: b not counted yet); b, told
    // to wait until then, stays counted: a's renewal at 950 ms knows the fleet (2 of 2, load
    // 4), and takes its share, 5/s, for as long as that brings 10 tokens, 2 s. Counted only
    // for the window, b would be gone by then, and a would take the rate again, unsure, 1 s.
    const first = await pace('a', 0, 20, {}, 500);
    expect([first.rate, first.ms]).toEqual([RATE, expect.closeTo(1_000)]);
    const waiting = await pace('b', 10, 20, {}, 500);
    expect([waiting.rate, waiting.ms]).toEqual([0, expect.closeTo(990)]);
    const renewed = await pace('a', 950, 20, {}, 500);
    expect([renewed.rate, renewed.ms]).toEqual([expect.closeTo(5), expect.closeTo(2_000)]);
  });

  it('leaves an instance without a pace its share when renewing a short pace, whatever the long ones hold', async () => {
    await settled();
    // a: a heavy instance, whose paces (4 tokens at a share of 5 to 10/s) last under a second.
    const heavy = (now: number) => pace('a', now, 20, { tokens: 4 });
    const first = await heavy(0);
    expect([first.rate, first.ms]).toEqual([10, expect.closeTo(400)]);
    // b takes a third of the rate for 3 s, while the fleet is a and b (weights 2 and 1).
    expect((await pace('b', 500, 10)).rate).toBeCloseTo(10 / 3);
    expect((await heavy(510)).ms).toBeCloseTo(600);
    // c (weight 1) joins: the rate is held, it waits for a's pace to end. Its share: 2.5.
    const waiting = await pace('c', 520, 10);
    expect([waiting.rate, waiting.ms]).toEqual([0, expect.closeTo(590)]);
    // a renews: its share is 5, but b holds more than its share of 2.5 now, so a takes what
    // leaves c its share (not the 5 that would leave c 1.67), and c finds it.
    expect((await heavy(1_050)).rate).toBeCloseTo(10 - 10 / 3 - 2.5);
    expect((await pace('c', 1_110, 10)).rate).toBeCloseTo(2.5);
    expect(sum(await paces(1_110))).toBeLessThanOrEqual(RATE + 1e-9);
  });

  /**
   * A settled fleet of 3 whose paces leave part of the rate unheld: a and b took their shares
   * (1.74/s each, 60 tokens: 30 s) of a load where c, waiting, weighed 3; c now asks at 8/s.
   */
  const unheldRate = async () => {
    await settled();
    const three = { instances: 3 };
    await pace('a', 0, 8, three);
    await pace('b', 10, 8, three);
    expect((await pace('c', 20, 30, three)).rate).toBe(0); // a wait, counted at 3
    expect((await pace('a', 950, 8, { ...three, tokens: 60 })).rate).toBeCloseTo(8 / 4.6);
    expect((await pace('b', 960, 8, { ...three, tokens: 60 })).rate).toBeCloseTo(8 / 4.6);
    return (weight: number) => pace('c', 1_000, 8, three, 10_000, weight);
  };

  it('takes the rate no pace holds and nobody waits for, up to its demand, until another pace is renewed', async () => {
    const c = await unheldRate();
    // Told at 0.2 (a load of 1.8), its share is 1.11/s for 9 s; a and b leave 6.52/s unheld
    // until they renew (27 s from now): it takes all of it for its 9 s, 49 tokens more than its
    // share brings, more than a lump at its next call would (twice its 10 tokens).
    expect(await c(0.2)).toMatchObject({
      rate: expect.closeTo(10 - 16 / 4.6),
      ms: expect.closeTo(9_000),
    });
    expect(sum(await paces(1_000))).toBeCloseTo(RATE);
  });

  it('leaves the spare rate in the bucket when it is worth less than a lump at the next call', async () => {
    const c = await unheldRate();
    // Told at 0.8 (a load of 2.4): 3.33/s for 3 s. The spare would bring 9.6 tokens more: its
    // next call takes them from the bucket as its lump, if it spends them.
    expect(await c(0.8)).toMatchObject({ rate: expect.closeTo(10 / 3), ms: expect.closeTo(3_000) });
  });

  it('takes a smaller spare rate when its next call could not take it as a lump', async () => {
    await unheldRate();
    // As above, but c tells the lump it may take: what its demand of 8/s spends in 250 ms, 2
    // tokens. The spare's 9.6 tokens beyond its share would wait in the bucket past that; it
    // takes the spare for its 3 s instead.
    const keeps = { saved: 0, lumpMs: 250 };
    expect(await pace('c', 1_000, 8, { instances: 3, ...keeps }, 10_000, 0.8)).toMatchObject({
      rate: expect.closeTo(10 - 16 / 4.6),
      ms: expect.closeTo(3_000),
    });
  });

  it('takes a bucket whose fleet set vanished under a caller holding a pace as lost, though it tells no epoch', async () => {
    await pace('a', 0, 5);
    // State lost (a restart or failover); a no longer remembers the epoch, but holds a pace.
    await client.del(redisKey(prefix, 'hot'), `${redisKey(prefix, 'hot')}:fleet`);
    expect(await pace('a', 900, 5, { held: 5, heldMs: 1_000 })).toMatchObject({
      rate: 5,
      ms: 1_000,
      lump: 0,
    });
    // Empty, not full: the others' paces (5/s, for twice a's 1 s) and a's new one charged ahead.
    expect(await level(900)).toBeCloseTo(-15);
  });

  it('gives back the part of the pace it replaces that is not due yet, once', async () => {
    await store.consume({ checks: [check('hot', RATE, BURST, 50)], now: 0 });
    expect(await pace('a', 0, 5)).toMatchObject({ rate: 5, ms: 1_000, lump: 20 });
    expect(await level(0)).toBeCloseTo(25); // 50 - 20 at once - 5 charged ahead
    // Half way: 5 refilled, 2.5 of the old pace given back, 20 at once and 5 charged again.
    expect(await pace('a', 500, 5)).toMatchObject({ lump: 20 });
    expect(await level(500)).toBeCloseTo(7.5);
    // Again at once: the pace just granted is given back whole (5), no more; 12 at once.
    expect(await pace('a', 500, 5)).toMatchObject({ lump: 12 });
    expect(await level(500)).toBeCloseTo(-4.5); // 7.5 + 5 - 12 - 5
  });

  /** Instance `id` takes a token and every whole token the bucket has at `now`: how many extra. */
  const takeAll = async (id: string, now: number) => {
    const asked: LeaseCheck = { ...check('hot', RATE, BURST, 1), maxExtra: BURST };
    const result = await store.lease({ checks: [asked], now, fleet: { id, windowMs: 10_000 } });
    return result.extras[0];
  };

  it('keeps the bucket below full by what a pace may still bring and have saved, shrinking once it ended', async () => {
    // a: 4/s for 1 s; it may save 4/s over half the 10 s window, 20 tokens, and spends them
    // when its traffic comes back: the bucket refills to 100 - 20, not to 100 beside them.
    await pace('a', 0, 4);
    // 4 s after its end a's savings are down to 4 tokens (they shrink at 4/s): 95 extras, not 99.
    expect(await takeAll('b', 5_000)).toBe(95);
    // Gone 5 s after its end: the whole bucket again (10 tokens refilled since).
    expect(await takeAll('b', 15_000)).toBe(99);
  });

  it('keeps the bucket below full at a grant only by the savings the caller carries into it', async () => {
    // As in the first case, but a tells it carries 5 saved tokens: 15 more left in the bucket.
    expect(await pace('a', 0, 4, { saved: 5 })).toEqual({
      rate: 4,
      ms: 1_000,
      lump: 20,
      savings: 5,
    });
    expect(await level(0)).toBeCloseTo(BURST - 20 - 4 - 5);
  });

  it('lends a pace the savings the bucket has room for below full, and a token', async () => {
    // A full bucket has no room: a, carrying nothing in, may save one token (75 left: 100 - 1 -
    // 20 at once - 4 charged ahead). Half a second later 2 are not due yet, and 5 refilled.
    expect(await pace('a', 0, 4, { saved: 0 })).toMatchObject({ rate: 4, savings: 1 });
    expect(await takeAll('b', 500)).toBe(79);
  });

  it('lends the whole cap where the bucket already owes it, at no token', async () => {
    // 50 spent: the bucket owes 50 beyond any pace, room for a's 20 (its cap) of savings.
    await store.consume({ checks: [check('hot', RATE, BURST, 50)], now: 0 });
    expect(await pace('a', 0, 4, { saved: 0 })).toMatchObject({ rate: 4, savings: 20, lump: 20 });
    expect(await level(0)).toBeCloseTo(50 - 20 - 4);
  });

  it('counts what a pace may have saved only once it came due (what its holder carried, at once)', async () => {
    await store.consume({ checks: [check('hot', RATE, BURST, 50)], now: 0 });
    expect(await pace('a', 0, 4, { saved: 0 })).toMatchObject({ savings: 20 });
    // b leaves, giving back 74 tokens it held: the bucket is full again.
    await pace('b', 0, 0, { giveBack: 74 });
    // 100 ms in, a may have saved 0.4 of the 20 lent, and 3.6 are not due yet: 96 takeable.
    expect(await takeAll('c', 100)).toBe(95);
  });

  it("gives at once what the bucket holds beyond the other paces' parts not due yet, its refill to come", async () => {
    await settled();
    await pace('a', 0, 4, { saved: 0 }); // 20 at once, 4 charged ahead
    expect(await takeAll('b', 0)).toBe(74); // the rest of the bucket
    // The bucket holds nothing, but a's 4 not due yet are charged as its refill to come, not
    // taken: c gets them at once (the refill covers a's pace and them, the paces adding up to
    // the rate at most). Its share: a third of the load of a, b (counted without a demand:
    // weighing as a typical instance, 0.4) and c.
    expect(await pace('c', 0, 4, { saved: 0 })).toMatchObject({
      rate: expect.closeTo(RATE / 3),
      lump: 4,
    });
  });

  it('gives at once no more than the caller spends while it keeps them', async () => {
    // 4/s, kept a second: 4 tokens, not the 20 of the first case.
    expect(await pace('a', 0, 4, { saved: 0, lumpMs: 1_000 })).toMatchObject({ rate: 4, lump: 4 });
  });

  it('skips a pace member it cannot read, rather than failing the call or counting it', async () => {
    await pace('a', 0, 4);
    // A member in another format (an earlier version of the script), live for a minute.
    await client.zadd(`${redisKey(prefix, 'hot')}:fleet`, '60000', '!5:b');
    expect(await pace('c', 100, 4)).toMatchObject({ rate: 4 });
    expect(await paces(100)).toMatchObject({ a: 4, c: 4 });
  });

  it('keeps a pace it could not renew as ended at the renewal, not forgotten', async () => {
    await pace('a', 0, 4);
    // a asks too little for a token within its 1 s (0.5/s): no pace, its last one ends now.
    expect(await pace('a', 400, 0.5)).toMatchObject({ rate: 0 });
    const members = await client.zrange(
      `${redisKey(prefix, 'hot')}:fleet`,
      '0',
      '-1',
      'WITHSCORES',
    );
    const last = members.findIndex((m) => m.startsWith('!4:') && m.endsWith(':a'));
    expect(members[last + 1]).toBe('400');
  });

  it('ends a pace asked at 0, with its part not yet due and the tokens the instance held', async () => {
    await store.consume({ checks: [check('hot', RATE, BURST, 50)], now: 0 });
    await pace('a', 0, 5);
    expect(await pace('a', 500, 0, { giveBack: 3 })).toEqual({
      rate: 0,
      ms: 0,
      lump: 0,
      savings: 0,
    });
    expect(await level(500)).toBeCloseTo(35.5); // 25 + 5 refilled + 2.5 not due + 3 held
    expect(await paces(500)).toEqual({});
  });
});
