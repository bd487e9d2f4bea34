/**
 * `concurrency` limits over HTTP, through the guard (which takes the slot)
 * and the interceptor (which gives it back when the handler's observable
 * completes or errors), or the response closing: at most N calls of one key
 * in flight; a refused call is a 429 with `Retry-After: 1`, and gives back
 * the rate token charged for it. End to end: test/concurrency/, docs/concurrency.md.
 */
import { Controller, Get } from '@nestjs/common';
import { Subject } from 'rxjs';
import { ManualClock, MemoryStore, RateLimit } from 'nestjs-holdup';
import {
  createGuardHarness,
  HARNESS_START,
  fakeRequest,
  FakeResponse,
  type GuardHarness,
} from '../utils/guard-harness.js';

@Controller()
class GenerationsController {
  @RateLimit({ name: 'generations', concurrency: 2, key: 'header:x-api-key' })
  @Get('generate')
  generate() {}

  @RateLimit([
    { name: 'generations', concurrency: 1, key: 'header:x-api-key' },
    { name: 'per-minute', rate: '100/min', burst: 5, key: 'header:x-api-key' },
  ])
  @Get('both')
  both() {}
}

const key = (apiKey: string) => fakeRequest({ headers: { 'x-api-key': apiKey } });

describe('guard and interceptor: concurrency', () => {
  let h: GuardHarness;
  beforeEach(async () => {
    h = await createGuardHarness(GenerationsController);
  });
  afterEach(() => h.close());

  it('takes a slot per admitted call, refuses the one over N (429, Retry-After 1), and frees it when the handler completes', async () => {
    const first = key('k1');
    const second = key('k1');
    const a = await h.canActivate('generate', first);
    expect([a.status, a.headers['ratelimit-policy'], a.headers['ratelimit']]).toEqual([
      200,
      '"generations";q=2;qu="concurrent-requests"',
      '"generations";r=1',
    ]);
    expect((await h.canActivate('generate', second)).headers['ratelimit']).toBe(
      '"generations";r=0',
    );
    const refused = await h.canActivate('generate', key('k1'));
    expect([refused.status, refused.headers['retry-after'], refused.headers['ratelimit']]).toEqual([
      429,
      '1',
      '"generations";r=0',
    ]);
    expect((await h.canActivate('generate', key('k2'))).status).toBe(200); // another key has its own slots

    // The first handler completes: its slot is free again, once.
    expect((await h.intercept('generate', () => ({ done: true }), first)).value).toEqual({
      done: true,
    });
    expect((await h.canActivate('generate', key('k1'))).headers['ratelimit']).toBe(
      '"generations";r=0',
    );
    expect((await h.canActivate('generate', key('k1'))).status).toBe(429);
  });

  it('a handler that throws, or a stream that errors, gives its slot back; a running stream holds it', async () => {
    const throwing = key('k1');
    const streaming = key('k1');
    await h.canActivate('generate', throwing);
    await h.canActivate('generate', streaming);
    expect(
      (
        await h.intercept(
          'generate',
          () => {
            throw new Error('generation failed');
          },
          throwing,
        )
      ).error,
    ).toEqual(new Error('generation failed'));
    const stream = new Subject<string>();
    const streamed = h.intercept('generate', () => stream, streaming);
    // One slot back (the thrown one); the stream still holds the other.
    expect((await h.canActivate('generate', key('k1'))).status).toBe(200);
    expect((await h.canActivate('generate', key('k1'))).status).toBe(429);
    stream.next('token');
    stream.error(new Error('stream broke'));
    expect((await streamed).error).toEqual(new Error('stream broke'));
    expect((await h.canActivate('generate', key('k1'))).status).toBe(200);
  });

  it('the response closing (the client gone) gives the slot back without the interceptor', async () => {
    const response = new FakeResponse();
    await h.canActivate('generate', key('k1'), response);
    await h.canActivate('generate', key('k1'));
    expect((await h.canActivate('generate', key('k1'))).status).toBe(429);
    response.abort();
    expect((await h.canActivate('generate', key('k1'))).status).toBe(200);
  });

  it('a client that leaves while its handler runs: the slot stays held until the handler ends; one that never ends loses it at its lease end', async () => {
    const clock = new ManualClock(HARNESS_START);
    const store = new MemoryStore();
    const released: string[] = [];
    const release = store.slots.release.bind(store.slots);
    store.slots.release = (request) => {
      released.push(request.id);
      return release(request);
    };
    await h.close();
    h = await createGuardHarness(GenerationsController, { clock, store });

    const ending = key('k1');
    const endingResponse = new FakeResponse();
    const neverEnding = key('k1');
    const neverEndingResponse = new FakeResponse();
    await h.canActivate('generate', ending, endingResponse);
    await h.canActivate('generate', neverEnding, neverEndingResponse);
    const stream = new Subject<string>();
    const ended = h.intercept('generate', () => stream, ending);
    void h.intercept('generate', () => new Subject<string>(), neverEnding);
    // Both clients leave; both handlers still run: their slots are theirs.
    endingResponse.abort();
    neverEndingResponse.abort();
    expect((await h.canActivate('generate', key('k1'))).status).toBe(429);
    expect(released).toEqual([]);

    stream.complete();
    await ended;
    expect(released).toHaveLength(1);
    // The handler that never ends: released when its lease (5 min by default) runs out, not before.
    clock.advance(300_000 - 1);
    expect(released).toHaveLength(1);
    clock.advance(1);
    expect(released).toHaveLength(2);
  });

  it('with a rate limit: both in the headers; a refused slot gives the rate token back', async () => {
    const holder = key('k1');
    const first = await h.canActivate('both', holder);
    expect([first.headers['ratelimit-policy'], first.headers['ratelimit']]).toEqual([
      '"per-minute";q=5;w=3, "generations";q=1;qu="concurrent-requests"',
      '"per-minute";r=4;t=1, "generations";r=0',
    ]);
    for (let i = 0; i < 3; i++) {
      const refused = await h.canActivate('both', key('k1'));
      expect([refused.status, refused.headers['retry-after']]).toEqual([429, '1']);
    }
    await h.intercept('both', () => 'done', holder);
    // The three refusals cost nothing: the rate bucket has 4 left, as after the first call.
    expect((await h.canActivate('both', key('k1'))).headers['ratelimit']).toBe(
      '"per-minute";r=3;t=1, "generations";r=0',
    );
  });
});
