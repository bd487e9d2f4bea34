/**
 * GraphQL end to end with Nest's default GraphQL context: Apollo on Express
 * and Mercurius on Fastify, real HTTP. Keys come from the HTTP request behind
 * the operation, headers go on its response, a refusal is a GraphQL error
 * with `extensions.code: 'TOO_MANY_REQUESTS'` that nulls only its own field,
 * and every resolver call is charged (aliases included).
 */
import request from 'supertest';
import type { INestApplication, Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { GraphQLModule } from '@nestjs/graphql';
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { MercuriusDriver, type MercuriusDriverConfig } from '@nestjs/mercurius';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import {
  ManualClock,
  MemoryStore,
  RateLimitModule,
  type RateLimitModuleOptions,
} from 'nestjs-holdup';
import { BadResolver, ShopResolver, TYPE_DEFS } from './shop.resolver.js';

const DRIVERS = [
  {
    name: 'Apollo on Express',
    graphql: () =>
      GraphQLModule.forRoot<ApolloDriverConfig>({
        driver: ApolloDriver,
        typeDefs: TYPE_DEFS,
        includeStacktraceInErrorResponses: false,
      }),
    adapter: () => new ExpressAdapter(),
  },
  {
    name: 'Mercurius on Fastify',
    graphql: () =>
      GraphQLModule.forRoot<MercuriusDriverConfig>({
        driver: MercuriusDriver,
        typeDefs: TYPE_DEFS,
      }),
    adapter: () => new FastifyAdapter(),
  },
] as const;

interface GraphqlAnswer {
  readonly status: number;
  readonly headers: Record<string, string | undefined>;
  readonly data: Record<string, unknown> | null;
  readonly errors: {
    path?: readonly string[];
    extensions?: Record<string, unknown>;
    message: string;
  }[];
}

describe.each(DRIVERS)('GraphQL, $name', (driver) => {
  let app: INestApplication | undefined;

  const boot = async (options: RateLimitModuleOptions = {}, resolvers: Type[] = [ShopResolver]) => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        RateLimitModule.forRoot({ clock: new ManualClock(1_700_000_000_000), ...options }),
        driver.graphql(),
      ],
      providers: resolvers,
    }).compile();
    app = moduleRef.createNestApplication(driver.adapter(), { logger: false });
    await app.init();
    if (driver.name === 'Mercurius on Fastify') await app.getHttpAdapter().getInstance().ready();
  };
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  const query = async (
    text: string,
    headers: Record<string, string> = {},
  ): Promise<GraphqlAnswer> => {
    const res = await request(app!.getHttpServer())
      .post('/graphql')
      .set(headers)
      .send({ query: text });
    const { data = null, errors = [] } = res.body as Partial<GraphqlAnswer>;
    const pick = (name: string) => res.headers[name] as string | undefined;
    return {
      status: res.status,
      headers: {
        ratelimit: pick('ratelimit'),
        'ratelimit-policy': pick('ratelimit-policy'),
        'retry-after': pick('retry-after'),
      },
      data,
      errors: errors.map(({ path, extensions, message }) => ({
        path,
        extensions: extensions && { code: extensions.code, retryAfter: extensions.retryAfter },
        message,
      })),
    };
  };
  const TOO_MANY = (path: string, retryAfter: number) => ({
    path: [path],
    extensions: { code: 'TOO_MANY_REQUESTS', retryAfter },
    message: 'Too Many Requests',
  });

  it('headers on the HTTP response of the operation, with the default context', async () => {
    await boot();
    const answer = await query('{ price(item: "tea") }');
    expect(answer).toEqual({
      status: 200,
      headers: {
        ratelimit: '"price";r=1;t=30',
        'ratelimit-policy': '"price";q=2;w=60',
        'retry-after': undefined,
      },
      data: { price: 30 },
      errors: [],
    });
  });

  it('every resolver call is charged: three aliases of a burst-2 field give two values and one TOO_MANY_REQUESTS; the unlimited field keeps its data', async () => {
    await boot();
    const answer = await query(
      '{ a: price(item: "x") b: price(item: "yy") c: price(item: "zzz") free }',
    );
    expect(answer.status).toBe(200);
    expect(answer.data).toEqual({ a: 10, b: 20, c: null, free: 'free' });
    expect(answer.errors).toEqual([TOO_MANY('c', 30)]);
    expect(answer.headers['retry-after']).toBe('30');
    expect(answer.headers.ratelimit).toBe('"price";r=0;t=30');
  });

  it('callers are told apart by the address behind the operation (trustProxy and X-Forwarded-For), or by a header key', async () => {
    await boot({ trustProxy: true });
    const from = (address: string) => ({ 'x-forwarded-for': address });
    await query('{ a: price(item: "x") b: price(item: "y") }', from('198.51.100.1'));
    expect((await query('{ price(item: "x") }', from('198.51.100.1'))).errors).toEqual([
      TOO_MANY('price', 30),
    ]);
    expect((await query('{ price(item: "x") }', from('198.51.100.2'))).data).toEqual({ price: 10 });

    expect((await query('{ keyed }', { 'x-api-key': 'k1' })).data).toEqual({ keyed: 'ok' });
    expect((await query('{ keyed }', { 'x-api-key': 'k1' })).errors).toEqual([
      TOO_MANY('keyed', 60),
    ]);
    expect((await query('{ keyed }', { 'x-api-key': 'k2' })).data).toEqual({ keyed: 'ok' });
  });

  it('a denial from RateLimiter.enforce() in a resolver: the same GraphQL error, and the headers', async () => {
    await boot();
    expect((await query('{ export }')).data).toEqual({ export: true });
    const denied = await query('{ export free }');
    expect(denied.data).toEqual({ export: null, free: 'free' });
    expect(denied.errors).toEqual([TOO_MANY('export', 3600)]);
    expect(denied.headers).toEqual({
      ratelimit: '"exports";r=0;t=3600',
      'ratelimit-policy': '"exports";q=1;w=3600',
      'retry-after': '3600',
    });
  });

  it("failMode 'closed' with a failing store: SERVICE_UNAVAILABLE on the limited field only", async () => {
    const broken = new MemoryStore();
    broken.consume = () => {
      throw new Error('store down');
    };
    await boot({ store: broken, failMode: 'closed' });
    const answer = await query('{ price(item: "x") free }');
    expect(answer.data).toEqual({ price: null, free: 'free' });
    expect(answer.errors).toEqual([
      {
        path: ['price'],
        extensions: { code: 'SERVICE_UNAVAILABLE', retryAfter: undefined },
        message: 'Rate limiting is temporarily unavailable',
      },
    ]);
  });

  it('a bad limit on a resolver fails the bootstrap, with the message an HTTP route gets', async () => {
    await expect(boot({}, [BadResolver])).rejects.toThrow(
      'RateLimit: BadResolver.free, limit "default": rate must be',
    );
  });
});
