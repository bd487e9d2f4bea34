/**
 * A flood of the `maxDelay` queue: a few attacker keys (addresses) each send
 * as many requests as their reservation admits to wait, then an innocent
 * caller needs to wait for its own token. The queue is one per process
 * (10,000 waiting requests); each key may hold 100 of them
 * (`MAX_WAITING_PER_KEY`), so one caller's flood never refuses another's
 * wait. Past its cap a key's requests are denied with Retry-After and what
 * they reserved is given back; the log says so once per burst.
 *
 * Before issue 26 the only bound was the process's: 34 keys (300 waiting
 * each, as 10/s with a 60 s maxDelay admits, in a queue of 10,000) filled it, and
 * the innocent caller's waits were refused.
 *
 * Through the real guard on a ManualClock (the guard harness); the queue is
 * the process's, so the figures are the same on memory and Redis.
 */
import { Controller, Get } from '@nestjs/common';
import { RateLimit, type RateLimitStore } from 'nestjs-holdup';
import { RateLimitEngine } from '../../lib/engine/rate-limit-engine.js';
import {
  createGuardHarness,
  type GuardHarness,
  type GuardOutcome,
} from '../utils/guard-harness.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';
import { storesOfKind } from '../utils/stores.js';

@Controller('smooth')
class SmoothController {
  /** Keyed by address: 10/s, one at once, up to a minute of waiting (600 reservations per key). */
  @RateLimit({ name: 'smooth', rate: 10, burst: 1, maxDelay: '60s' })
  @Get()
  smooth() {}
}

const ATTACKERS = 40;
const PER_ATTACKER = 300;
const report = process.env.HOLDUP_REPORT === '1';

const until = async (done: () => boolean, what: string) => {
  for (let i = 0; i < 2_000 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!done()) throw new Error(`timed out waiting until ${what}`);
};

describe.each(['memory', 'redis'] as const)('a flood of the maxDelay queue (%s store)', (kind) => {
  const makeStore = storesOfKind(kind);
  let h: GuardHarness;
  let store: RateLimitStore;
  const logs = silenceRateLimitLogs();
  /** Refunds asked of the store and not answered yet (the engine sends them detached). */
  let refundsInFlight = 0;
  beforeEach(async () => {
    store = makeStore(`wait-queue-flood-${kind}`);
    const refund = store.refund.bind(store);
    store.refund = (request) => {
      refundsInFlight++;
      const answer = Promise.resolve(refund(request));
      void answer.finally(() => refundsInFlight--).catch(() => undefined);
      return answer;
    };
    h = await createGuardHarness(SmoothController, { store });
  });
  afterEach(() => h.close());

  it(`${ATTACKERS} keys × ${PER_ATTACKER} requests: each key holds at most 100 waiting, the innocent caller's waits are not refused`, async () => {
    const engine = h.moduleRef.get(RateLimitEngine);
    let refused = 0;
    let admittedAtOnce = 0;
    const attack: Promise<GuardOutcome>[] = [];
    for (let a = 0; a < ATTACKERS; a++) {
      const ip = `198.18.${a}.1`;
      for (let i = 0; i < PER_ATTACKER; i++) {
        attack.push(
          h.canActivate('smooth', { ip }).then((outcome) => {
            if (outcome.status === 429) refused++;
            return outcome;
          }),
        );
      }
    }
    const total = ATTACKERS * PER_ATTACKER;
    // Settled: every request refused, admitted at once (its burst), or waiting.
    await until(() => refused + ATTACKERS + engine.waits.size >= total, 'the attack is decided');
    admittedAtOnce = total - refused - engine.waits.size;
    const byKey = (engine.waits as unknown as { byKey?: Map<string, number> }).byKey ?? new Map();
    const waitingPerKey = Math.max(...byKey.values());

    // What the refused reserved was given back: one more request of an attacker, still at its cap,
    // is told to come back when it would have waited 10.1 s, not 30 s. (Once Redis has answered
    // the refunds: on a loaded machine thousands of them can still be on their way.)
    await until(() => refundsInFlight === 0, 'the refunds are answered');
    const more = await h.canActivate('smooth', { ip: '198.18.0.1' });

    // The innocent caller: its first request at once, the next two wait one and two intervals.
    const before = engine.waits.size;
    let innocentSettled = 0;
    const innocent = [0, 1, 2].map(() =>
      h.canActivate('smooth', { ip: '203.0.113.77' }).finally(() => innocentSettled++),
    );
    await until(
      () => innocentSettled + engine.waits.size - before >= 3,
      'the innocent caller is answered or waits',
    );
    h.clock.advance(200);
    const innocentOutcomes = await Promise.all(innocent);
    const innocentRefused = innocentOutcomes.filter((outcome) => outcome.status !== 200).length;

    const warnings = logs.messages('warn');
    if (report)
      console.log(
        `${kind}: ${total} attack requests: ${admittedAtOnce} admitted at once, ${before} waiting (${waitingPerKey} per key, cap 100), ${refused} refused; innocent refused ${innocentRefused} of 3; log lines ${warnings.length}; next attacker request Retry-After ${more.headers['retry-after']}`,
      );
    expect(engine.waits.size).toBeLessThanOrEqual(ATTACKERS * 100);
    expect(waitingPerKey).toBe(100);
    expect(refused).toBe(ATTACKERS * (PER_ATTACKER - 101));
    expect(innocentRefused).toBe(0);
    expect(more.status).toBe(429);
    expect(Number(more.headers['retry-after'])).toBeLessThanOrEqual(11);
    // Said once for the burst (its count comes when the burst ends), never a line per request.
    if (report) console.log(warnings.join('\n'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/100 requests of one key are waiting/);
    void Promise.all(attack); // released by the module's shutdown
  });
});
