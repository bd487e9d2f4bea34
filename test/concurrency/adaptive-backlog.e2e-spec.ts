import http from 'node:http';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { ManualClock, MemoryStore, RateLimit, RateLimiter, RateLimitModule } from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';

/** Handlers wait for the test to open the gate. */
let open: () => void = () => undefined;
let gate = Promise.resolve();
const closeGate = () => (gate = new Promise<void>((resolve) => (open = resolve)));

@Controller()
class QueueController {
  @Get('work')
  @RateLimit({
    name: 'work',
    key: 'global',
    concurrency: { adaptive: { min: 1, max: 1 }, backlog: { size: 1, timeout: '1s' } },
  })
  async work(): Promise<{ ok: true }> {
    await gate;
    return { ok: true };
  }
}

interface Answer {
  status: number;
  retryAfter: string | undefined;
}

function get(url: string): { answer: Promise<Answer>; abort: () => void } {
  let request!: http.ClientRequest;
  const answer = new Promise<Answer>((resolve, reject) => {
    request = http.get(`${url}/work`, (response) => {
      response.resume();
      response.on('end', () =>
        resolve({
          status: response.statusCode!,
          retryAfter: response.headers['retry-after'] as string | undefined,
        }),
      );
    });
    request.on('error', reject);
  });
  return { answer, abort: () => request.destroy() };
}

describe.each(PLATFORMS)('adaptive concurrency: the backlog over HTTP (%s)', (platform) => {
  let app: INestApplication;
  let limiter: RateLimiter;
  let url: string;
  const clock = new ManualClock(1_000_000);

  beforeEach(async () => {
    app = await createApp(platform, {
      imports: [RateLimitModule.forRoot({ store: new MemoryStore(), clock })],
      controllers: [QueueController],
    });
    await app.listen(0, '127.0.0.1');
    limiter = app.get(RateLimiter);
    url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });
  afterEach(async () => {
    open();
    await app.close();
  });

  const state = () => limiter.concurrencyLimit('work')[0];
  const until = async (check: () => boolean) => {
    for (let i = 0; !check(); i++) {
      if (i > 2000) throw new Error('never happened');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };

  it('holds a caller until a slot frees; refuses one beyond its size at once, and one that waited too long, with Retry-After', async () => {
    closeGate();
    const first = get(url);
    await until(() => state()?.inFlight === 1);
    const second = get(url);
    await until(() => state()?.queued === 1);
    const third = await get(url).answer;
    expect(third).toEqual({ status: 429, retryAfter: '1' });
    open();
    expect((await first.answer).status).toBe(200);
    expect((await second.answer).status).toBe(200);

    closeGate();
    const holder = get(url);
    await until(() => state()?.inFlight === 1);
    const waiter = get(url);
    await until(() => state()?.queued === 1);
    clock.advance(1000);
    expect(await waiter.answer).toEqual({ status: 429, retryAfter: '1' });
    open();
    expect((await holder.answer).status).toBe(200);
    await until(() => state()?.inFlight === 0);
  });

  it('a client that leaves while waiting takes nothing and gives back nothing', async () => {
    closeGate();
    const holder = get(url);
    await until(() => state()?.inFlight === 1);
    const leaving = get(url);
    await until(() => state()?.queued === 1);
    leaving.abort();
    await leaving.answer.catch(() => undefined);
    await until(() => state()?.queued === 0);
    expect(state()).toMatchObject({ inFlight: 1, queued: 0 });
    open();
    expect((await holder.answer).status).toBe(200);
    await until(() => state()?.inFlight === 0);
    // The slot it never took was not given back on its behalf: one in flight at most, as before.
    closeGate();
    const next = get(url);
    await until(() => state()?.inFlight === 1);
    expect(state()).toMatchObject({ inFlight: 1, queued: 0 });
    open();
    expect((await next.answer).status).toBe(200);
  });
});
