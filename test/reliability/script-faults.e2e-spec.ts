/**
 * Redis failing while its scripts run (issue 26, item 9): a frozen server
 * (SIGSTOP), one out of memory (`maxmemory 1`, `noeviction`) and a read-only
 * replica, each during `block.lua` (a key being blocked by `blockDuration`),
 * the window scripts (fixed and sliding windows) and `slots.lua` (a
 * `concurrency` limit whose two slots are held, and released during the
 * fault). `failMode: 'closed'`, `timeoutMs` 100, the module's ManualClock,
 * the real guard and interceptor on a RedisStore over a real redis-server.
 *
 * Asserted for each fault:
 * - during it, every call is answered (none hangs past `timeoutMs` plus a
 *   generous margin: a hang is the failure looked for), by the fail mode
 *   (503); no unhandled rejection;
 * - the log says it once per burst: a bounded number of lines whatever the
 *   number of calls (120 here);
 * - after it, nothing is stuck: the block ends when it said (10 s after it
 *   began), the windows count again in their next window (3 admitted, then
 *   429), and the slots held during the fault are freed (released by the
 *   retries once Redis takes writes again) so that 2 new calls are admitted
 *   and the third refused.
 *
 * HOLDUP_REPORT=1 prints the figures (for docs/reliability.md).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Controller, Get } from '@nestjs/common';
import { RateLimit } from 'nestjs-holdup';
import { RedisStore } from 'nestjs-holdup/redis';
import { MAX_RETRY_MS } from '../../lib/concurrency/slot-releases.js';
import { createGuardHarness, type GuardHarness } from '../utils/guard-harness.js';
import { uniquePrefix } from '../utils/redis-harness.js';
import { ON_TEST_CLOCK } from '../utils/test-clock-store-options.js';
import { slotsHeldInRedis, withFaultyRedis } from '../utils/redis-faults.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';
import { watchStalls } from '../utils/stall-watch.js';
import { FAULTS } from './faults.js';

const TIMEOUT_MS = 100;
/** A hang is the failure: far above `timeoutMs`, far below "never" (plus the machine's stalls: `watchStalls`). */
const ANSWER_BOUND_MS = TIMEOUT_MS + 1_000;
/** Calls per route during the fault. */
const CALLS = 30;
/** Lines the fault may cost, whatever the number of calls: per minute, the engine's 3 bursts and their recoveries, the slots' failure and recovery, the failed releases and their count. */
const MAX_LINES = 10;

@Controller('scripts')
class ScriptsController {
  @RateLimit({ name: 'abuse', rate: 1, burst: 2, blockDuration: '10s', key: 'header:x-caller' })
  @Get('blocked')
  blocked() {
    return { ok: true };
  }

  @RateLimit({ name: 'fixed', rate: '3/min', algorithm: 'fixed-window', key: 'header:x-caller' })
  @Get('fixed')
  fixed() {
    return { ok: true };
  }

  @RateLimit({
    name: 'sliding',
    rate: '3/min',
    algorithm: 'sliding-window',
    key: 'header:x-caller',
  })
  @Get('sliding')
  sliding() {
    return { ok: true };
  }

  @RateLimit({ name: 'slots', concurrency: 2, key: 'header:x-caller' })
  @Get('slots')
  slots() {
    return { ok: true };
  }
}

const WINDOWS = ['fixed', 'sliding'] as const;
const report = process.env.HOLDUP_REPORT === '1';

describe.each(FAULTS.filter((fault) => fault.name !== 'killed' && fault.name !== 'slow'))(
  'Redis $name during block.lua, the window scripts and slots.lua',
  (fault) => {
    let h: GuardHarness;
    let keyPrefix: string;
    const logs = silenceRateLimitLogs();
    const redis = withFaultyRedis({ beforeStop: () => h?.close() });
    const stalls = watchStalls();
    afterAll(() => stalls.stop());

    beforeAll(async () => {
      keyPrefix = uniquePrefix('script-faults');
      h = await createGuardHarness(ScriptsController, {
        store: new RedisStore({
          client: redis.client,
          keyPrefix,
          ...ON_TEST_CLOCK,
          timeoutMs: TIMEOUT_MS,
        }),
        failMode: 'closed',
      });
    });
    /** Slots held in Redis by `caller` (the slot sets' keys name it). */
    const slotsInRedis = (caller = 'full'): Promise<number> =>
      slotsHeldInRedis(
        redis.admin,
        keyPrefix,
        (key) => key.includes('slots') && key.includes(caller),
      );
    const as = (caller: string) => ({ headers: { 'x-caller': caller } });
    /** The caller whose key is blocked, whose windows are full, whose slots are held. */
    const status = async (route: string, caller = 'full') =>
      (await h.canActivate(route, as(caller))).status;
    /** One call through the guard, the interceptor and a handler that runs until `done` resolves. */
    const hold = (done: Promise<void>) => h.call('slots', () => done, as('full'));

    it('answers every call by the fail mode in time, says it once, and leaves nothing stuck', async () => {
      // Healthy: the key blocked (10 s from now), each window full, both slots held.
      const blockedAt = h.clock.now();
      expect([await status('blocked'), await status('blocked')]).toEqual([200, 200]);
      const blockedAnswer = await h.canActivate('blocked', as('full'));
      expect([blockedAnswer.status, blockedAnswer.headers['retry-after']]).toEqual([429, '10']);
      for (const route of WINDOWS) {
        const statuses = [];
        for (let i = 0; i < 4; i++) statuses.push(await status(route));
        expect(statuses).toEqual([200, 200, 200, 429]);
      }
      let endHeld!: () => void;
      const held = new Promise<void>((resolve) => (endHeld = resolve));
      const holders = [hold(held), hold(held)];
      while ((await slotsInRedis()) < 2) await sleep(5);
      expect(await status('slots')).toBe(429);
      logs.clear();

      await fault.apply(redis.server, redis.admin);
      // The held handlers end during the fault: their releases fail, and are retried.
      endHeld();
      const holderOutcomes = await Promise.all(holders);
      const routes = ['blocked', ...WINDOWS, 'slots'];
      const timed = async (route: string, caller: string) => {
        const started = performance.now();
        const answer = await h.canActivate(route, as(caller));
        return {
          route,
          fresh: caller !== 'full',
          status: answer.status,
          ms: performance.now() - started,
        };
      };
      // Half on the full key, half on keys never seen (whose first call must write);
      // on the slots route, one such key for all: 2 slots at most between them.
      const fresh = (route: string, i: number) => (route === 'slots' ? 'other' : `fresh-${i}`);
      stalls.reset();
      const answers = await Promise.all(
        Array.from({ length: CALLS }, (_, i) =>
          routes.map((route) => timed(route, i % 2 === 0 ? 'full' : fresh(route, i))),
        ).flat(),
      );
      const freshOf = (route: string) =>
        answers.filter((a) => a.fresh && a.route === route).map((a) => a.status);

      const slowest = Math.max(...answers.map((answer) => answer.ms));
      const stalledMs = stalls.maxMs;
      const statusesOf = (fresh: boolean) =>
        [...new Set(answers.filter((a) => a.fresh === fresh).map((a) => a.status))].sort();
      const statuses = { full: statusesOf(false), fresh: statusesOf(true) };
      const linesDuringFault = logs.messages().length;
      await fault.heal(redis.server, redis.admin);

      // After: the slots are freed by the release retries, once writes land again.
      const healed = performance.now();
      let left = await slotsInRedis();
      while (left > 0 && performance.now() - healed < MAX_RETRY_MS + 2_000) {
        await sleep(20);
        left = await slotsInRedis();
      }
      const freedMs = performance.now() - healed;
      // On the key shared by the fresh slot calls: only the slots of admitted calls stay.
      const otherAdmitted = freshOf('slots').filter((s) => s === 200).length;
      let otherSlots = await slotsInRedis('other');
      while (otherSlots > otherAdmitted && performance.now() - healed < MAX_RETRY_MS + 2_000) {
        await sleep(20);
        otherSlots = await slotsInRedis('other');
      }
      // The block ends when it said: still refused 1 ms before, admitted at its end.
      h.clock.set(blockedAt + 9_999);
      const lastBlocked = await status('blocked');
      h.clock.set(blockedAt + 10_000);
      const afterBlock = await status('blocked');
      // The windows count again two windows on (the sliding window weighs the previous one).
      h.clock.set(blockedAt + 120_000);
      const windows: Record<string, number[]> = {};
      for (const route of WINDOWS) {
        windows[route] = [];
        for (let i = 0; i < 4; i++) windows[route].push(await status(route));
      }
      let endProbes!: () => void;
      const probesHeld = new Promise<void>((resolve) => (endProbes = resolve));
      const probes = [hold(probesHeld), hold(probesHeld)];
      while ((await slotsInRedis()) < 2 && performance.now() - healed < 10_000) await sleep(5);
      const thirdSlot = await status('slots');
      endProbes();
      const probeOutcomes = await Promise.all(probes);
      const linesTotal = logs.messages().length;

      if (report)
        console.log(
          JSON.stringify({
            fault: fault.name,
            calls: answers.length,
            statuses,
            otherSlotsAdmitted: `${otherAdmitted} of ${freshOf('slots').length} (bound 2), ${otherSlots} held`,
            slowestMs: Math.round(slowest),
            linesDuringFault,
            linesTotal,
            slotsLeftAfterHeal: left,
            slotsFreedMs: Math.round(freedMs),
            blockEnd: [lastBlocked, afterBlock],
            windows,
            slotProbes: [...probeOutcomes.map((outcome) => outcome.status), thirdSlot],
          }),
        );

      expect(holderOutcomes.map((outcome) => outcome.status)).toEqual([200, 200]);
      // A call that must write is decided by the fail mode; on the full key, Redis
      // may still read and deny (429: true) where it cannot write; never admitted.
      for (const route of ['blocked', ...WINDOWS])
        expect(new Set(freshOf(route))).toEqual(new Set([503]));
      // slots.lua may still take a slot where Redis refuses writes: its first write
      // (ZREMRANGEBYSCORE) is not refused out of memory, and a script that wrote goes on.
      // Then the slot is real and the bound holds: at most 2 admitted on the key.
      expect(freshOf('slots').every((s) => s === 200 || s === 429 || s === 503)).toBe(true);
      expect(otherAdmitted).toBeLessThanOrEqual(2);
      expect(otherAdmitted).toBe(otherSlots);
      if (fault.name === 'stopped') expect(statuses.full).toEqual([503]);
      else expect(statuses.full.every((s) => s === 429 || s === 503)).toBe(true);
      expect(slowest).toBeLessThan(ANSWER_BOUND_MS + stalledMs);
      expect(linesDuringFault).toBeGreaterThanOrEqual(1); // said...
      expect(linesTotal).toBeLessThanOrEqual(MAX_LINES); // ...once per burst, not per call
      expect(left).toBe(0);
      expect([lastBlocked, afterBlock]).toEqual([429, 200]);
      expect(windows).toEqual({ fixed: [200, 200, 200, 429], sliding: [200, 200, 200, 429] });
      expect(probeOutcomes.map((outcome) => outcome.status)).toEqual([200, 200]);
      expect(thirdSlot).toBe(429);
      expect(redis.unhandled).toEqual([]);
    });
  },
);
