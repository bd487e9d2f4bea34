/**
 * Key functions may answer with a promise (a session look-up): the guard
 * awaits it, so that each session has its own bucket; a rejected promise or
 * an answer that is not a key fails the request (500) and charges nothing.
 * A route whose keys and store are synchronous stays free of promises.
 */
import { jest } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import {
  ManualClock,
  MemoryStore,
  RATE_LIMIT_STORE,
  RateLimitExceededException,
  RateLimitGuard,
  RateLimitModule,
  type RateLimitStore,
} from 'nestjs-holdup';
import { RecordingStore } from '../keys/keys.fixtures.js';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { AsyncKeysController } from './async-keys.fixtures.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';

const key = (handler: string, identity: string, limit = 'default') =>
  `tb|${limit}|AsyncKeysController.${handler}:async-keys/${handler === 'asyncObject' ? 'async-object' : handler}|${identity}`;

/**
 * One turn of the event loop: a rejection nobody handled has been reported by
 * then. Jest (30) fails the running test on an unhandled rejection by itself
 * (a `process.on('unhandledRejection')` listener here never hears of it), so
 * waiting for it within the test is the check.
 */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe.each(PLATFORMS)('async key functions (%s)', (platform) => {
  let app: INestApplication | undefined;
  let store: RecordingStore;
  const logs = silenceRateLimitLogs();

  beforeEach(async () => {
    // Nest's exception handler logs what became a 500 (its logger is off, the call still happens).
    store = new RecordingStore();
    app = await createApp(platform, {
      imports: [RateLimitModule.forRoot({ store, clock: new ManualClock(10_000_000) })],
      controllers: [AsyncKeysController],
    });
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  /** Status of each request to `path`, in order, with each set of headers. */
  const statuses = async (path: string, headerSets: Record<string, string>[]) => {
    const out: number[] = [];
    for (const headers of headerSets) {
      const req = request(app!.getHttpServer()).get(path);
      for (const [name, value] of Object.entries(headers)) req.set(name, value);
      out.push((await req).status);
    }
    return out;
  };
  /** What Nest logged as errors (the cause of each 500, as `String(logs.error)`: `<name>: <message>`). */
  const loggedErrors = () => logs.error.mock.calls.map(([message]) => String(message));

  it('a promised key is awaited: each session has its own bucket (not one "[object Promise]" bucket)', async () => {
    const a = { 'X-Session': 'token-a' };
    const b = { 'X-Session': 'token-b' };
    expect(await statuses('/async-keys/session', [a, a, a, b, {}])).toEqual([
      200, 200, 429, 200, 200,
    ]);
    expect(store.keys).toEqual([
      ...Array(3).fill(key('session', 'k=alice')),
      key('session', 'k=bob'),
      // No session: the key function answers undefined, so the client address.
      key('session', '127.0.0.1'),
    ]);
  });

  it('synchronous keys before and after a promised one keep their own keys, in order', async () => {
    const headers = { 'X-Session': 'token-a', 'X-Tenant': 't1' };
    expect(await statuses('/async-keys/mixed', [headers, headers, headers])).toEqual([
      200, 200, 429,
    ]);
    expect(store.keys).toEqual(
      Array(3)
        .fill([
          key('mixed', '127.0.0.1', 'per-ip'),
          key('mixed', 'k=alice', 'per-session'),
          key('mixed', 'h=t1', 'per-tenant'),
        ])
        .flat(),
    );
  });

  it('a rejected key promise: 500, nothing charged, no unhandled rejection', async () => {
    expect(await statuses('/async-keys/rejected', [{}, {}, {}])).toEqual([500, 500, 500]);
    expect(store.keys).toEqual([]);
    expect(loggedErrors()).toEqual(Array(3).fill('Error: session store unavailable'));
    await nextTurn(); // no unhandled rejection (see nextTurn)
  });

  it.each([
    ['object', 'synchronously'],
    ['asyncObject', 'in a promise'],
  ])(
    'a key function answering an object (%s, %s): 500 naming the route and limit, nothing charged',
    async (handler) => {
      const path = `/async-keys/${handler === 'asyncObject' ? 'async-object' : handler}`;
      expect(await statuses(path, [{}, {}, {}])).toEqual([500, 500, 500]);
      expect(store.keys).toEqual([]);
      expect(loggedErrors()).toEqual(
        Array(3).fill(
          `TypeError: RateLimit: AsyncKeysController.${handler}, limit "default": the key function returned an object; ` +
            'it must return a string or a number (undefined, null or an empty string fall back to the client address)',
        ),
      );
      await nextTurn(); // no unhandled rejection (see nextTurn)
    },
  );
});

describe.each(PLATFORMS)('the guard stays synchronous where every key is (%s)', (platform) => {
  let app: INestApplication | undefined;
  let canActivate: jest.Spied<typeof RateLimitGuard.prototype.canActivate>;

  beforeEach(async () => {
    canActivate = jest.spyOn(RateLimitGuard.prototype, 'canActivate');
    app = await createApp(platform, {
      // The default store (MemoryStore), which answers synchronously.
      imports: [RateLimitModule.forRoot({ clock: new ManualClock(10_000_000) })],
      controllers: [AsyncKeysController],
    });
    expect(app.get<RateLimitStore>(RATE_LIMIT_STORE, { strict: false })).toBeInstanceOf(
      MemoryStore,
    );
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
    canActivate.mockRestore();
  });

  const get = (path: string, headers: Record<string, string> = {}) => {
    const req = request(app!.getHttpServer()).get(path);
    for (const [name, value] of Object.entries(headers)) req.set(name, value);
    return req;
  };

  it("synchronous keys ('ip', a header) with the memory store: canActivate returns a boolean, and denies by throwing", async () => {
    await get('/async-keys/sync', { 'X-Tenant': 't1' }).expect(200);
    await get('/async-keys/sync', { 'X-Tenant': 't1' }).expect(200);
    await get('/async-keys/sync', { 'X-Tenant': 't1' }).expect(429);
    const results = canActivate.mock.results;
    expect(results.map((result) => result.type)).toEqual(['return', 'return', 'throw']);
    expect(results[0]!.value).toBe(true);
    expect(results[1]!.value).toBe(true);
    expect(results[2]!.value).toBeInstanceOf(RateLimitExceededException);
  });

  it('a promised key: canActivate returns a promise of the decision', async () => {
    await get('/async-keys/session', { 'X-Session': 'token-a' }).expect(200);
    const [result] = canActivate.mock.results;
    expect(canActivate.mock.results).toHaveLength(1);
    expect(result!.type).toBe('return');
    expect(typeof (result!.value as { then?: unknown }).then).toBe('function');
    await expect(result!.value).resolves.toBe(true);
  });
});
