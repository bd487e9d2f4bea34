import http from 'node:http';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import {
  ManualClock,
  MemoryStore,
  RateLimit,
  RateLimiter,
  RateLimitEvents,
  RateLimitModule,
  type RateLimitTypes,
} from 'nestjs-holdup';
import { seededRandom } from 'nestjs-holdup/adaptive';
import { Registry } from 'prom-client';
import { createApp, PLATFORMS } from '../utils/create-app.js';

/**
 * The simulated downstream, on the module clock: capacity C calls in flight,
 * `noLoadMs` each below it, latency × in-flight / C beyond it (± 10 %). A
 * call completes when the test moves the clock past its end.
 */
class Downstream {
  capacity = 10;
  readonly noLoadMs = 50;
  private readonly random = seededRandom(3);
  private readonly calls: { at: number; done: () => void }[] = [];

  constructor(private readonly clock: ManualClock) {}

  get pending(): number {
    return this.calls.length;
  }

  call(): Promise<void> {
    const excess = Math.max(1, (this.calls.length + 1) / this.capacity);
    // On the test's tick, rounded rather than up: the clock moves by ticks.
    const exact = this.noLoadMs * excess * (0.9 + 0.2 * this.random());
    const latency = Math.max(STEP_MS, Math.round(exact / STEP_MS) * STEP_MS);
    return new Promise((done) => this.calls.push({ at: this.clock.now() + latency, done }));
  }

  nextAt(): number {
    let next = Infinity;
    for (const call of this.calls) next = Math.min(next, call.at);
    return next;
  }

  completeDue(now: number): void {
    for (let i = this.calls.length - 1; i >= 0; i--) {
      if (this.calls[i]!.at > now) continue;
      this.calls[i]!.done();
      this.calls.splice(i, 1);
    }
  }
}

const clock = new ManualClock(1_000_000);
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
const downstream = new Downstream(clock);

@Controller()
class InferenceController {
  @Get('infer')
  @RateLimit({
    name: 'inference',
    key: () => 'global',
    concurrency: { adaptive: { min: 1, max: 100, initial: 2 } },
  })
  async infer(): Promise<{ ok: true }> {
    await downstream.call();
    return { ok: true };
  }
}

/** The simulation's tick: arrivals and completions happen on multiples of it. */
const STEP_MS = 10;

/**
 * Open-loop traffic over real HTTP in simulated time: requests arrive every
 * `1000 / perSecond` ms of the module clock; the clock moves by ticks, and
 * after each the test waits until every request sent is either answered or
 * at the downstream, so that each latency the limit measures is the
 * simulated one (to the tick), whatever the real HTTP round trips take.
 */
class Traffic {
  fired = 0;
  answered = 0;
  readonly statuses = new Map<number, number>();
  lastPolicy: string | undefined;
  private nextArrival = clock.now();

  constructor(private readonly url: string) {}

  async run(durationMs: number, perSecond: number): Promise<void> {
    const end = clock.now() + durationMs;
    for (let at = clock.now() + STEP_MS; at <= end; at += STEP_MS) {
      clock.set(at);
      downstream.completeDue(at);
      for (; this.nextArrival <= at; this.nextArrival += 1000 / perSecond) this.send();
      await this.settled();
    }
  }

  private send(): void {
    this.fired++;
    const request = http.get(`${this.url}/infer`, { agent }, (response) => {
      response.resume();
      response.on('end', () => {
        const status = response.statusCode!;
        this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
        if (status === 200) this.lastPolicy = response.headers['ratelimit-policy'] as string;
        this.answered++;
      });
    });
    request.on('error', () => this.answered++);
  }

  /** Every request sent is answered or waiting at the downstream. */
  private async settled(): Promise<void> {
    for (let i = 0; this.fired !== this.answered + downstream.pending; i++) {
      if (i > 100_000) throw new Error('requests neither answered nor at the downstream');
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}

describe.each(PLATFORMS)('adaptive concurrency over HTTP (%s)', (platform) => {
  let app: INestApplication;
  let limiter: RateLimiter;
  let traffic: Traffic;
  const registry = new Registry();
  const changes: RateLimitTypes.ConcurrencyLimitChangeEvent[] = [];

  beforeAll(async () => {
    app = await createApp(platform, {
      imports: [
        RateLimitModule.forRoot({
          store: new MemoryStore(),
          clock,
          metrics: { prometheus: { registry } },
        }),
      ],
      controllers: [InferenceController],
    });
    await app.listen(0, '127.0.0.1');
    limiter = app.get(RateLimiter);
    app.get(RateLimitEvents).on('limit-change', (change) => void changes.push(change));
    traffic = new Traffic((await app.getUrl()).replace('[::1]', '127.0.0.1'));
  });
  afterAll(async () => {
    downstream.completeDue(Infinity);
    await app.close();
  });

  const current = (): RateLimitTypes.ConcurrencyLimitState =>
    limiter.concurrencyLimit('inference')[0]!;

  it('finds C = 10 from 2 under twice its capacity within 3 s, then follows C down to 5 within 3 s', async () => {
    downstream.capacity = 10;
    await traffic.run(3000, 400);
    const found = current();
    expect(found.limit).toBeGreaterThanOrEqual(8);
    expect(found.limit).toBeLessThanOrEqual(13);
    expect(found.noLoadRttMs).toBeGreaterThanOrEqual(45);
    expect(found.noLoadRttMs).toBeLessThanOrEqual(55);
    // The headers say the limit in force: q is the current limit.
    expect(traffic.lastPolicy).toMatch(/^"inference";q=\d+;qu="concurrent-requests"$/);
    const q = Number(/q=(\d+)/.exec(traffic.lastPolicy!)![1]);
    expect(Math.abs(q - found.limit)).toBeLessThanOrEqual(1);
    // Twice the capacity offered: about half refused, the rest served.
    expect(traffic.statuses.get(429)).toBeGreaterThan(traffic.fired / 4);

    downstream.capacity = 5;
    await traffic.run(3000, 400);
    const followed = current();
    expect(followed.limit).toBeGreaterThanOrEqual(4);
    expect(followed.limit).toBeLessThanOrEqual(7);
    expect([...traffic.statuses.keys()].sort()).toEqual([200, 429]);

    // Visible: each move a limit-change event, the last one the gauge's value.
    expect(changes.length).toBeGreaterThan(3);
    expect(changes.at(-1)).toMatchObject({ name: 'inference', to: followed.limit });
    expect(changes.some((change) => change.to > change.from)).toBe(true);
    expect(changes.some((change) => change.to < change.from)).toBe(true);
    const gauge = (await registry.getMetricsAsJSON()).find((metric) =>
      metric.name.endsWith('concurrency_limit'),
    );
    expect(gauge?.values).toEqual([
      expect.objectContaining({ value: followed.limit, labels: { policy: 'inference' } }),
    ]);
  }, 60_000);
});
