import type { INestApplication } from '@nestjs/common';
import http from 'node:http';
import { MemoryStore, RateLimitModule, type RateLimitStore } from 'nestjs-holdup';
import type {
  ConcurrencySlots,
  SlotAcquireResult,
} from '../../lib/store/concurrency-slots.interface.js';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { makeStore, type StoreFixture } from '../utils/stores.js';
import { GenerationsController, inFlight } from './generations.controller.js';
import { until } from '../utils/time.js';

/** Every acquisition and release the store saw, by slot id: the real store's, counted on the way. */
class SlotLedger {
  readonly acquired = new Set<string>();
  readonly released = new Map<string, number>();
  readonly keys = new Set<string>();

  constructor(readonly slots: ConcurrencySlots) {
    const acquire = slots.acquire.bind(slots);
    const release = slots.release.bind(slots);
    slots.acquire = (request) => {
      const answer = acquire(request);
      const note = (result: SlotAcquireResult) => {
        if (result.allowed) this.acquired.add(request.id);
        this.keys.add(request.key);
        return result;
      };
      return answer instanceof Promise ? answer.then(note) : note(answer);
    };
    slots.release = (request) => {
      this.released.set(request.id, (this.released.get(request.id) ?? 0) + 1);
      return release(request);
    };
  }

  get settled(): boolean {
    return this.acquired.size === this.released.size;
  }
}

type Outcome = number | 'aborted';

/** One request of `mode`; a `slow` one is aborted by the client while its handler runs. */
function fire(port: number, mode: string, agent: http.Agent): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: `/mixed?mode=${mode}`,
        headers: { 'x-api-key': 'leak' },
        agent,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
        res.on('error', () => resolve('aborted'));
      },
    );
    req.on('error', () => resolve('aborted'));
    if (mode === 'slow') setTimeout(() => req.destroy(), 10);
    req.end();
  });
}

/** `total` requests from 16 clients at once: 10 % throwing, 10 % aborted mid-flight, the rest fine. */
async function hammer(port: number, total: number): Promise<Map<Outcome, number>> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  const outcomes = new Map<Outcome, number>();
  let next = 0;
  const worker = async () => {
    while (next < total) {
      const i = next++;
      const mode = i % 10 === 0 ? 'throw' : i % 10 === 1 ? 'slow' : 'ok';
      const outcome = await fire(port, mode, agent);
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  agent.destroy();
  return outcomes;
}

const CASES = [
  ['memory', 10_000],
  ['redis', 1_000],
] as const;

describe.each(CASES)('concurrency: no slot leaks (%s store, %d requests)', (kind, total) => {
  describe.each(PLATFORMS)('%s', (platform) => {
    let app: INestApplication;
    let fixture: StoreFixture;
    let store: RateLimitStore;
    let port: number;
    let ledger: SlotLedger;

    beforeEach(async () => {
      fixture =
        kind === 'memory'
          ? { store: new MemoryStore(), release: async () => undefined }
          : await makeStore(kind, `leak-${platform}`);
      store = fixture.store;
      ledger = new SlotLedger(store.slots!);
      app = await createApp(platform, {
        imports: [RateLimitModule.forRoot({ store })],
        controllers: [GenerationsController],
      });
      await app.listen(0, '127.0.0.1');
      port = Number(new URL((await app.getUrl()).replace('[::1]', '127.0.0.1')).port);
      inFlight.reset();
    });
    afterEach(async () => {
      inFlight.release();
      await app?.close();
      await fixture?.release();
    });

    it('throwing handlers and aborting clients: every slot released exactly once, all free afterwards', async () => {
      const outcomes = await hammer(port, total);
      expect(
        (outcomes.get(200) ?? 0) +
          (outcomes.get(500) ?? 0) +
          (outcomes.get(429) ?? 0) +
          (outcomes.get('aborted') ?? 0),
      ).toBe(total);
      expect(outcomes.get(500)).toBeGreaterThan(0);
      expect(outcomes.get('aborted')).toBeGreaterThan(0);
      // Handlers of aborted requests may still be finishing: their slots were freed when the client left.
      await until(() => ledger.settled, 10_000);
      expect(ledger.acquired.size).toBeGreaterThan(total / 4);
      expect([...ledger.released.values()].every((count) => count === 1)).toBe(true);
      expect([...ledger.released.keys()].every((id) => ledger.acquired.has(id))).toBe(true);
      const [key] = [...ledger.keys];
      expect(await store.slots!.inFlight!(key!, Date.now())).toBe(0);

      // All 8 slots free: 8 requests at once are admitted and held, a ninth is refused.
      const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
      const held = Array.from({ length: 8 }, () => fire(port, 'hold', agent));
      await until(() => ledger.acquired.size - ledger.released.size === 8, 10_000);
      expect(await fire(port, 'ok', agent)).toBe(429);
      inFlight.release();
      expect(await Promise.all(held)).toEqual(Array(8).fill(200));
      agent.destroy();
    }, 120_000);
  });
});
