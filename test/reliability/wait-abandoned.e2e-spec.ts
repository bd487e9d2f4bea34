/**
 * Clients that leave while their request is being decided, on a `maxDelay`
 * route: nobody is left waiting for a client that is gone, no handler runs
 * for it, and the token each reserved is given back, on memory and Redis.
 *
 * The race: the client's connection closes while the store call is in
 * flight (Redis), so the `close` event is over before the guard starts to
 * watch for it. Before issue 26 such a request was queued all the same: of
 * 2,000 aborted requests 23 still ran the handler and 6 were still queued
 * 1.5 s later, each holding its reservation. The transport now checks the
 * connection's state before the wait (as the slot code does).
 *
 * Through the real guard on a ManualClock (the guard harness), with 200
 * clients: on Redis each leaves right after its request is sent to the
 * store; on memory (which decides synchronously) each has left before the
 * guard runs.
 */
import { Controller, Get } from '@nestjs/common';
import { RateLimit, type RateLimitStore } from 'nestjs-holdup';
import { RateLimitEngine } from '../../lib/engine/rate-limit-engine.js';
import {
  createGuardHarness,
  FakeResponse,
  flushPromises,
  type GuardHarness,
  type GuardOutcome,
} from '../utils/guard-harness.js';
import { storesOfKind } from '../utils/stores.js';
import { until } from '../utils/time.js';

@Controller('queued')
class QueuedController {
  @RateLimit({ name: 'queued', rate: 10, burst: 1, key: 'global', maxDelay: '60s' })
  @Get()
  queued() {}
}

const CLIENTS = 200;
const report = process.env.HOLDUP_REPORT === '1';

describe.each(['memory', 'redis'] as const)(
  'clients leaving during the decision (%s store)',
  (kind) => {
    const makeStore = storesOfKind(kind);
    let h: GuardHarness;
    let store: RateLimitStore;
    beforeEach(async () => {
      store = makeStore(`wait-abandoned-${kind}`);
      h = await createGuardHarness(QueuedController, { store });
    });
    afterEach(() => h.close());

    it(`${CLIENTS} clients gone before their wait: none waits or runs, their tokens come back`, async () => {
      const engine = h.moduleRef.get(RateLimitEngine);
      expect((await h.canActivate('queued')).allowed).toBe(true); // the burst
      const outcomes: Promise<GuardOutcome>[] = [];
      for (let i = 0; i < CLIENTS; i++) {
        const response = new FakeResponse();
        if (kind === 'memory') response.abort();
        outcomes.push(h.canActivate('queued', undefined, response));
        if (kind === 'redis') response.abort(); // its store call is in flight
      }
      // The clock never moves here: a client that waits never settles. The deadline only ends the
      // test for one that does, so it is far past a loaded machine's stalls (it costs nothing when
      // all settle).
      const settled = await Promise.race([
        Promise.all(outcomes),
        flushPromises().then(() => new Promise((resolve) => setTimeout(resolve, 10_000))),
      ]);
      const ran = Array.isArray(settled) ? settled.filter((outcome) => outcome.allowed).length : -1;
      const queued = engine.waits.size;
      if (report) console.log(`${kind}: ${ran} handler(s) ran, ${queued} still queued`);
      expect(queued).toBe(0);
      expect(ran).toBe(0);
      // Their reservations are given back (not awaited by the guard): a store call of our own, on
      // the same connection, is answered after them. Then the next caller waits one interval.
      await store.peek({
        checks: [{ key: 'tb|other|*|x', limit: { algorithm: 'token-bucket', rate: 1, burst: 1 } }],
        now: h.clock.now(),
      });
      let next: GuardOutcome | undefined;
      const pending = h.canActivate('queued').then((outcome) => (next = outcome));
      // Its store call answered (a round trip on Redis): it waits, alone in the queue.
      await until(() => engine.waits.size !== 0 || next !== undefined, 10_000);
      expect(engine.waits.size).toBe(1);
      h.clock.advance(100);
      await pending;
      expect(next).toMatchObject({ allowed: true, status: 200 });
    });
  },
);
