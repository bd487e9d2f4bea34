/**
 * Behind a proxy: the client address is what the HTTP platform resolved
 * (Express `app.set('trust proxy', …)`, Fastify `new FastifyAdapter({ trustProxy })`)
 * unless the module's own `trustProxy` is set, which then wins; an
 * `X-Forwarded-For` nobody trusted is said once, with what to change.
 *
 * The platforms are told to trust the proxy by its address ('loopback': the
 * test client connects from 127.0.0.1), which both honour the same way. A hop
 * count is Express-only here: Fastify 5.12 no longer takes one (its types
 * refuse a number, and given one it trusts nothing, as it cannot validate the
 * immediate peer).
 */
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { ManualClock, RateLimitModule, type RateLimitModuleOptions } from 'nestjs-holdup';
import { RecordingStore } from '../keys/keys.fixtures.js';
import {
  createApp,
  expressSet,
  platformTrustProxy,
  PLATFORMS,
  type CreateAppOptions,
} from '../utils/create-app.js';
import { ProxiedController } from './proxies.fixtures.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';

const KEY = 'tb|default|ProxiedController.ip:proxied/ip|';
/** The platform trusts the proxy the test client stands for (it connects from 127.0.0.1). */
const PROXY = 'loopback';
const UNTRUSTED =
  /^RateLimitModule: a request from \S+ carried X-Forwarded-For, which is not trusted/;

describe.each(PLATFORMS)('behind a proxy (%s)', (platform) => {
  let app: INestApplication | undefined;
  let store: RecordingStore;
  const logs = silenceRateLimitLogs();

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  const boot = async (
    options: Omit<RateLimitModuleOptions, 'store' | 'clock'> = {},
    platformOptions: CreateAppOptions = {},
  ) => {
    store = new RecordingStore();
    app = await createApp(
      platform,
      {
        imports: [
          RateLimitModule.forRoot({ ...options, store, clock: new ManualClock(10_000_000) }),
        ],
        controllers: [ProxiedController],
      },
      platformOptions,
    );
  };
  /** Status of each request to /proxied/ip, in order; each entry is the X-Forwarded-For sent (undefined: none). */
  const statuses = async (forwardedFor: (string | undefined)[]) => {
    const out: number[] = [];
    for (const value of forwardedFor) {
      const req = request(app!.getHttpServer()).get('/proxied/ip');
      if (value !== undefined) req.set('X-Forwarded-For', value);
      out.push((await req).status);
    }
    return out;
  };
  /** The warnings about an untrusted X-Forwarded-For. */
  const untrustedWarnings = () =>
    logs.warn.mock.calls
      .map(([message]) => String(message))
      .filter((message) => message.includes('X-Forwarded-For'));

  describe("the platform's trust-proxy setting (module trustProxy not set)", () => {
    it("trusting the proxy's address: two clients behind it get their own buckets, whatever they wrote further left", async () => {
      await boot({}, platformTrustProxy(PROXY));
      const a = '203.0.113.1';
      const b = '203.0.113.2';
      expect(await statuses([a, `198.51.100.66, ${a}`, a, b, b])).toEqual([
        200, 200, 429, 200, 200,
      ]);
      expect(store.keys).toEqual([
        ...Array(3).fill(`${KEY}203.0.113.1`),
        ...Array(2).fill(`${KEY}203.0.113.2`),
      ]);
      // The address was the proxy's to give: nothing to logs.warn about.
      expect(untrustedWarnings()).toEqual([]);
    });

    it('trusting every hop: the left-most forwarded address is the client', async () => {
      await boot({}, platformTrustProxy(true));
      expect(
        await statuses([
          '203.0.113.1, 10.0.0.1',
          '203.0.113.2, 10.0.0.1',
          '203.0.113.1, 10.0.0.2',
          '203.0.113.1',
        ]),
      ).toEqual([200, 200, 200, 429]);
      expect(store.keys).toEqual([
        `${KEY}203.0.113.1`,
        `${KEY}203.0.113.2`,
        `${KEY}203.0.113.1`,
        `${KEY}203.0.113.1`,
      ]);
    });

    it("trusting nothing (the platforms' default): every request is the socket's, one bucket", async () => {
      await boot();
      expect(await statuses(['203.0.113.1', '203.0.113.2', undefined])).toEqual([200, 200, 429]);
      expect(new Set(store.keys)).toEqual(new Set([`${KEY}127.0.0.1`]));
    });
  });

  describe("the module's trustProxy overrides the platform's", () => {
    it('platform trusts the proxy, module trustProxy: false: one bucket for everyone, and no warning', async () => {
      await boot({ trustProxy: false }, platformTrustProxy(PROXY));
      expect(await statuses(['203.0.113.1', '203.0.113.2', '203.0.113.3'])).toEqual([
        200, 200, 429,
      ]);
      expect(new Set(store.keys)).toEqual(new Set([`${KEY}127.0.0.1`]));
      expect(untrustedWarnings()).toEqual([]);
    });

    it('platform trusts nothing, module trustProxy: 1: a bucket per client', async () => {
      await boot({ trustProxy: 1 });
      expect(
        await statuses(['203.0.113.1', '203.0.113.2', '198.51.100.66, 203.0.113.1', '203.0.113.1']),
      ).toEqual([200, 200, 200, 429]);
      expect(store.keys).toEqual([
        `${KEY}203.0.113.1`,
        `${KEY}203.0.113.2`,
        `${KEY}203.0.113.1`,
        `${KEY}203.0.113.1`,
      ]);
      expect(untrustedWarnings()).toEqual([]);
    });

    it('platform trusts every hop, module trustProxy: 1: only the nearest hop is believed', async () => {
      await boot({ trustProxy: 1 }, platformTrustProxy(true));
      // The platform alone would take the left-most entry, which the client wrote itself.
      expect(
        await statuses([
          '198.51.100.1, 203.0.113.7',
          '198.51.100.2, 203.0.113.7',
          '198.51.100.3, 203.0.113.7',
        ]),
      ).toEqual([200, 200, 429]);
      expect(store.keys).toEqual(Array(3).fill(`${KEY}203.0.113.7`));
    });
  });

  describe("a module trustProxy that contradicts the platform's own setting", () => {
    /** The start-up warnings about the two settings. */
    const conflictWarnings = () =>
      logs.messages('warn').filter((message) => message.includes("the platform's own setting"));
    const setting =
      platform === 'express' ? "Express app.set('trust proxy')" : 'Fastify { trustProxy }';

    it('is said once at start-up, naming both settings', async () => {
      await boot({ trustProxy: false }, platformTrustProxy(PROXY));
      expect(conflictWarnings()).toEqual([
        `RateLimitModule: trustProxy is false but the platform's own setting, ${setting}, is "loopback". ` +
          "The rate limiter finds client addresses with its own (the 'ip' key, allowList, clientAddress()), so it may limit another " +
          "address than the one req.ip, your logs and other middleware see. Make the two agree, or leave the module's trustProxy " +
          "unset to use the platform's. (Said once, at start-up.)",
      ]);
      expect(await statuses(['203.0.113.1', '203.0.113.2'])).toEqual([200, 200]);
      expect(conflictWarnings()).toHaveLength(1);
    });

    it('every hop against one: said too', async () => {
      await boot({ trustProxy: 1 }, platformTrustProxy(true));
      expect(conflictWarnings()).toEqual([
        expect.stringContaining(
          `trustProxy is 1 but the platform's own setting, ${setting}, is true.`,
        ),
      ]);
    });

    it('is not said when they agree (a named range spelt out), when the module says nothing, or when the platform is left at its default', async () => {
      await boot({ trustProxy: ['127.0.0.0/8', '::1'] }, platformTrustProxy(PROXY));
      await app!.close();
      await boot({}, platformTrustProxy(PROXY));
      await app!.close();
      await boot({ trustProxy: 1 });
      expect(conflictWarnings()).toEqual([]);
    });
  });

  describe('an X-Forwarded-For nobody trusts', () => {
    it('is said once, however many requests carry it, naming the settings to change', async () => {
      await boot();
      const forwarded = Array.from({ length: 8 }, (_, i) => `203.0.113.${i + 1}`);
      expect(await statuses(forwarded)).toEqual([200, 200, 429, 429, 429, 429, 429, 429]);
      const lines = untrustedWarnings();
      expect(lines).toHaveLength(1);
      expect(logs.warn).toHaveBeenCalledTimes(1);
      expect(logs.warn.mock.contexts[0]).toMatchObject({ context: 'RateLimit' });
      const [line] = lines as [string];
      expect(line).toMatch(UNTRUSTED);
      expect(line).toContain("app.set('trust proxy'"); // Express
      expect(line).toContain('Fastify { trustProxy }');
      expect(line).toContain("the module's trustProxy option");
      expect(line).toContain('trustProxy: false');
    });

    it("is said when the module's own trustProxy does not trust the socket either", async () => {
      await boot({ trustProxy: ['10.0.0.0/8'] });
      expect(await statuses(['203.0.113.1', '203.0.113.2'])).toEqual([200, 200]);
      expect(new Set(store.keys)).toEqual(new Set([`${KEY}127.0.0.1`]));
      expect(untrustedWarnings()).toEqual([expect.stringMatching(UNTRUSTED)]);
    });

    it('is not said with an explicit trustProxy: false (the application says there is no proxy), where it is otherwise', async () => {
      await boot({ trustProxy: false });
      expect(await statuses(['203.0.113.1', '203.0.113.2', '203.0.113.3'])).toEqual([
        200, 200, 429,
      ]);
      expect(logs.warn).not.toHaveBeenCalled();
      // The same requests to an application that said nothing are warned about.
      await app!.close();
      await boot();
      expect(await statuses(['203.0.113.1', '203.0.113.2', '203.0.113.3'])).toEqual([
        200, 200, 429,
      ]);
      expect(untrustedWarnings()).toEqual([expect.stringMatching(UNTRUSTED)]);
    });

    it('is not said until a request carries X-Forwarded-For', async () => {
      await boot();
      expect(await statuses([undefined, undefined])).toEqual([200, 200]);
      expect(logs.warn).not.toHaveBeenCalled();
      expect(await statuses(['203.0.113.1'])).toEqual([429]);
      expect(untrustedWarnings()).toEqual([expect.stringMatching(UNTRUSTED)]);
    });
  });
});

describe("behind a proxy (express, app.set('trust proxy', 1): a hop count)", () => {
  let app: INestApplication | undefined;
  afterEach(() => app?.close());

  it('two clients behind one proxy get their own buckets, whatever they wrote further left', async () => {
    const store = new RecordingStore();
    app = await createApp(
      'express',
      {
        imports: [RateLimitModule.forRoot({ store, clock: new ManualClock(10_000_000) })],
        controllers: [ProxiedController],
      },
      { beforeInit: (created) => expressSet(created, 'trust proxy', 1) },
    );
    const get = (forwardedFor: string) =>
      request(app!.getHttpServer()).get('/proxied/ip').set('X-Forwarded-For', forwardedFor);
    await get('203.0.113.1').expect(200);
    await get('198.51.100.66, 203.0.113.1').expect(200);
    await get('203.0.113.1').expect(429);
    await get('203.0.113.2').expect(200);
    expect(store.keys).toEqual([...Array(3).fill(`${KEY}203.0.113.1`), `${KEY}203.0.113.2`]);
  });
});
