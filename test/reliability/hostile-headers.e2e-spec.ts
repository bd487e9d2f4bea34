/**
 * Hostile input over real HTTP, on Express and Fastify: what a client can put
 * in the headers the keys are read from. Whatever it sends, the answer is a
 * decision (200/429) or the platform's own refusal (400/431), never a 500;
 * the bucket keys stay bounded; notations of one address are one bucket;
 * and nothing sent lets one caller reach another's bucket.
 */
import net from 'node:net';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import request from 'supertest';
import {
  ManualClock,
  MemoryStore,
  RateLimit,
  RateLimitModule,
  type RateLimitModuleOptions,
} from 'nestjs-holdup';
import type { ConsumeRequest } from 'nestjs-holdup/store';
import { RedisStore } from 'nestjs-holdup/redis';
import type { Redis } from 'ioredis';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { connectSharedClient } from '../utils/redis-client.js';
import { uniquePrefix } from '../utils/redis-harness.js';
import { ANSWERED_DEADLINE_MS } from '../utils/test-clock-store-options.js';

const LIMIT = { rate: '1/min', burst: 2 } as const;

@Controller('hostile')
class HostileController {
  @RateLimit(LIMIT)
  @Get('ip')
  ip() {
    return { ok: true };
  }

  @RateLimit({ ...LIMIT, key: 'header:x-api-key' })
  @Get('api-key')
  apiKey() {
    return { ok: true };
  }
}

/** Records every bucket key the guard asks for. */
class RecordingStore extends MemoryStore {
  readonly keys: string[] = [];
  override consume(request: ConsumeRequest) {
    for (const check of request.checks) this.keys.push(check.key);
    return super.consume(request);
  }
}

/** Bytes supertest (and Node's client) refuse to send: a raw request over a socket; the status line's code, or 0 when the connection closed without one. */
function rawStatus(port: number, headerLine: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(
        Buffer.concat([
          Buffer.from('GET /hostile/api-key HTTP/1.1\r\nHost: x\r\n'),
          headerLine,
          Buffer.from('\r\nConnection: close\r\n\r\n'),
        ]),
      );
    });
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)));
    socket.on('error', reject);
  });
}

describe.each(PLATFORMS)('hostile headers (%s)', (platform) => {
  let app: INestApplication;
  let store: RecordingStore;

  const boot = async (options: Omit<RateLimitModuleOptions, 'clock'> = {}) => {
    store = new RecordingStore();
    app = await createApp(platform, {
      imports: [RateLimitModule.forRoot({ store, ...options, clock: new ManualClock(10_000_000) })],
      controllers: [HostileController],
    });
  };
  afterEach(() => app?.close());
  const get = (path: string, headers: Record<string, string>) => {
    const req = request(app.getHttpServer()).get(path);
    for (const [name, value] of Object.entries(headers)) req.set(name, value);
    return req;
  };
  const identities = () => new Set(store.keys.map((key) => key.slice(key.lastIndexOf('|') + 1)));

  it.each([true, 1, ['127.0.0.1', '::ffff:127.0.0.1']] as const)(
    'a 1,000-hop X-Forwarded-For (~12 kB, under the platform header limit), trustProxy %p: a decision, a bounded key',
    async (trustProxy) => {
      await boot({ trustProxy: trustProxy as RateLimitModuleOptions['trustProxy'] });
      const chain = Array.from(
        { length: 1_000 },
        (_, i) => `10.${(i >> 8) & 255}.${i & 255}.1`,
      ).join(', ');
      const statuses = [];
      for (let i = 0; i < 3; i++)
        statuses.push((await get('/hostile/ip', { 'X-Forwarded-For': chain })).status);
      expect(statuses).toEqual([200, 200, 429]);
      for (const key of store.keys) expect(key.length).toBeLessThan(200);
    },
  );

  it('a 1 MB header is refused by the platform (431), before the limiter, and the server keeps serving', async () => {
    await boot({ trustProxy: true });
    const huge = 'a'.repeat(1 << 20);
    const refused = await get('/hostile/ip', { 'X-Forwarded-For': huge }).catch(
      (error: { code?: string }) => error,
    );
    expect([431, 'ECONNRESET', 'EPIPE']).toContain(
      (refused as { status?: number; code?: string }).status ?? (refused as { code?: string }).code,
    );
    expect((await get('/hostile/ip', {})).status).toBe(200);
  });

  it.each([
    ['NUL', Buffer.from('X-Api-Key: a\u0000b', 'latin1')],
    ['CR', Buffer.from('X-Api-Key: a\rb', 'latin1')],
    ['a bare LF inside the value', Buffer.from('X-Api-Key: a\nb', 'latin1')],
  ])(
    '%s in a key header: refused by the platform (400) or a decision, never a 500',
    async (_label, line) => {
      await boot();
      await app.listen(0, '127.0.0.1');
      const { port } = app.getHttpServer().address() as net.AddressInfo;
      expect([0, 200, 400]).toContain(await rawStatus(port, line));
      expect([200, 429]).toContain(
        (await get('/hostile/api-key', { 'x-api-key': 'after' })).status,
      );
    },
  );

  it('invalid UTF-8 in a key header: a decision, keyed by a fixed-length digest', async () => {
    await boot();
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as net.AddressInfo;
    const line = Buffer.concat([Buffer.from('X-Api-Key: '), Buffer.from([0xff, 0xfe, 0xc3, 0x28])]);
    expect(await rawStatus(port, line)).toBe(200);
    expect([...identities()]).toEqual([expect.stringMatching(/^h#[A-Za-z0-9_-]{43}$/)]);
  });

  it("braces, percent signs and a bucket key's own syntax in a key header are one caller's identity, nobody else's", async () => {
    await boot();
    const values = [
      '{victim}',
      'victim',
      '%7Bvictim%7D',
      'ip=127.0.0.1',
      'tb|default|*|kvictim',
      '#victim',
    ];
    for (const value of values)
      expect((await get('/hostile/api-key', { 'x-api-key': value })).status).toBe(200);
    expect(identities().size).toBe(values.length);
    // The real client at 127.0.0.1 (no header) still has its whole burst.
    expect((await get('/hostile/api-key', {})).status).toBe(200);
    expect((await get('/hostile/api-key', {})).status).toBe(200);
  });

  it('notations of one IPv6 client and its /64 are one bucket; IPv4-mapped IPv6 is the IPv4 client', async () => {
    await boot({ trustProxy: true });
    const one = [
      '2001:db8:1:2::1',
      '2001:DB8:1:2:0:0:0:1',
      '[2001:db8:1:2::1]:443',
      '2001:db8:1:2:ffff:ffff:ffff:ffff',
      '2001:db8:1:2::9%eth0',
    ];
    const statuses = [];
    for (const address of one)
      statuses.push((await get('/hostile/ip', { 'X-Forwarded-For': address })).status);
    expect(statuses).toEqual([200, 200, 429, 429, 429]);
    expect([...identities()]).toEqual(['2001:db8:1:2::/64']);
    expect((await get('/hostile/ip', { 'X-Forwarded-For': '::ffff:203.0.113.7' })).status).toBe(
      200,
    );
    expect((await get('/hostile/ip', { 'X-Forwarded-For': '203.0.113.7' })).status).toBe(200);
    expect((await get('/hostile/ip', { 'X-Forwarded-For': '203.0.113.7' })).status).toBe(429);
  });
});

describe('hostile keys in Redis', () => {
  let client: Redis;
  let app: INestApplication;
  afterEach(async () => {
    await app?.close();
    client?.disconnect();
  });

  it('a header naming another caller inside braces (a Cluster hash tag) reaches a bucket of its own', async () => {
    client = await connectSharedClient();
    const store = new RedisStore({
      client,
      keyPrefix: uniquePrefix('hostile'),
      time: 'client',
      timeoutMs: ANSWERED_DEADLINE_MS,
    });
    app = await createApp('express', {
      imports: [RateLimitModule.forRoot({ store, clock: new ManualClock(10_000_000) })],
      controllers: [HostileController],
    });
    const get = (value: string) =>
      request(app.getHttpServer()).get('/hostile/api-key').set('x-api-key', value);
    expect([
      (await get('victim')).status,
      (await get('victim')).status,
      (await get('victim')).status,
    ]).toEqual([200, 200, 429]);
    for (const value of ['{victim}', '}victim{', '{}victim', 'victim}', '%victim']) {
      expect((await get(value)).status).toBe(200);
    }
    expect((await get('victim')).status).toBe(429);
  });
});
