import type { Type } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import {
  MemoryStore,
  RateLimitModule,
  type RateLimitModuleOptions,
  type RateLimitStore,
} from 'nestjs-holdup';
import { controllerWith } from '../validation/validation.fixtures.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';

/** Boot a real application (Express) with one controller `Gen` carrying `limits`; what it failed with, or undefined. */
async function bootError(
  limits: unknown,
  options: RateLimitModuleOptions = {},
  controllers?: Type[],
): Promise<Error | undefined> {
  try {
    const moduleRef = await Test.createTestingModule({
      imports: [RateLimitModule.forRoot(options)],
      controllers: controllers ?? [controllerWith('Gen', limits)],
    }).compile();
    const app = moduleRef.createNestApplication(new ExpressAdapter(), { logger: false });
    try {
      await app.init();
      await request(app.getHttpServer()).get('/Gen/h').expect(200);
    } finally {
      await app.close();
    }
  } catch (error) {
    return error as Error;
  }
  return undefined;
}

const WHERE = 'RateLimit: Gen.handler, limit "gen":';
const POSITIVE = 'concurrency must be a positive integer (at most 1000000)';
const LEASE =
  "leaseTimeout must be a positive number of milliseconds or a duration such as '30s' or '5min', at most one day";

/** A store of the contract alone: no slots. */
class RatesOnlyStore implements RateLimitStore {
  private readonly inner = new MemoryStore();
  consume = this.inner.consume.bind(this.inner);
  peek = this.inner.peek.bind(this.inner);
  refund = this.inner.refund.bind(this.inner);
  reset = this.inner.reset.bind(this.inner);
  close = this.inner.close.bind(this.inner);
}

describe('concurrency: start-up validation names the place, the limit and the option', () => {
  it('valid: a concurrency limit with a lease, beside a rate limit (control)', async () => {
    expect(
      await bootError([
        {
          name: 'gen',
          concurrency: 4,
          key: 'header:x-api-key',
          leaseTimeout: '30s',
          failMode: 'closed',
          scope: 'shared',
        },
        { name: 'rate', rate: '10/s' },
      ]),
    ).toBeUndefined();
  });

  it.each([
    [{ concurrency: 0 }, `${POSITIVE}, got 0`],
    [{ concurrency: -1 }, `${POSITIVE}, got -1`],
    [{ concurrency: 1.5 }, `${POSITIVE}, got 1.5`],
    [{ concurrency: '4' }, `${POSITIVE}, got "4"`],
    [{ concurrency: 1e7 }, `${POSITIVE}, got 10000000`],
    [
      { concurrency: 4, rate: '10/s' },
      'rate cannot be combined with concurrency: a limit is a rate limit or a concurrency limit: declare a second limit (another name) for the rate',
    ],
    [
      { concurrency: 4, burst: 4 },
      'burst cannot be combined with concurrency: is a rate-limit option; a concurrency limit has no bucket',
    ],
    [
      { concurrency: 4, cost: 2 },
      'cost cannot be combined with concurrency: is a rate-limit option; a request holds one slot',
    ],
    [
      { concurrency: 4, maxDelay: '1s' },
      'maxDelay cannot be combined with concurrency: is a rate-limit option; a concurrency limit refuses at once rather than queueing',
    ],
    [
      { concurrency: 4, blockDuration: '1min' },
      'blockDuration cannot be combined with concurrency: is a rate-limit option; a concurrency limit frees a slot as soon as a request ends',
    ],
    [
      { concurrency: 4, charge: 'failures' },
      'charge cannot be combined with concurrency: is a rate-limit option; a slot is always given back when the request ends',
    ],
    [
      { concurrency: 4, adaptive: { min: 1 } },
      'adaptive cannot be combined with concurrency: is a rate-limit option; a concurrency limit has no rate to adapt',
    ],
    [
      { concurrency: 4, skip: () => false },
      'skip cannot be combined with concurrency: is not supported on a concurrency limit; use @SkipRateLimit(name) on the routes it should not apply to',
    ],
    [{ concurrency: 4, shadow: true }, 'shadow is not supported on a concurrency limit'],
    [{ concurrency: 4, leaseTimeout: 0 }, `${LEASE}, got 0`],
    [{ concurrency: 4, leaseTimeout: 'forever' }, `${LEASE}, got "forever"`],
    [{ concurrency: 4, leaseTimeout: '2d' }, `${LEASE}, got "2d"`],
    [
      { concurrency: 4, failMode: 'local' },
      "failMode 'local' needs a store that can decide locally when its shared backend fails (TwoTierStore); this store cannot",
    ],
    [{ concurrency: 4, concurency: 2 }, 'concurency is not an option (did you mean concurrency?)'],
    [
      { rate: 5, leaseTimeout: '1s' },
      'leaseTimeout only applies to a concurrency limit (one with concurrency: N)',
    ],
  ])('%j', async (limit, problem) => {
    const error = await bootError({ name: 'gen', ...limit });
    expect(error).toBeInstanceOf(TypeError);
    expect(error?.message).toBe(`${WHERE} ${problem}`);
  });

  it("the module's shadow: refused unless the concurrency limit says shadow: false", async () => {
    expect((await bootError({ name: 'gen', concurrency: 2 }, { shadow: true }))?.message).toBe(
      `${WHERE} shadow is not supported on a concurrency limit (the module's shadow is on: set shadow: false on this limit)`,
    );
    expect(
      await bootError({ name: 'gen', concurrency: 2, shadow: false }, { shadow: true }),
    ).toBeUndefined();
  });

  it('maxDelay on a rate limit of a route with a concurrency limit is refused', async () => {
    const error = await bootError([
      { name: 'gen', concurrency: 2 },
      { name: 'smooth', rate: 10, maxDelay: '1s' },
    ]);
    expect(error?.message).toBe(
      'RateLimit: Gen.handler, limit "smooth": maxDelay cannot be combined with a concurrency limit on the same route ("gen"): a request waiting for its token would hold no slot',
    );
  });

  it('a store without slots: refused at start-up', async () => {
    const error = await bootError({ name: 'gen', concurrency: 2 }, { store: new RatesOnlyStore() });
    expect(error?.message).toBe(
      `${WHERE} concurrency needs a store with concurrency slots (RateLimitStore.slots: MemoryStore, RedisStore, TwoTierStore); this one has none`,
    );
    // Rate limits alone are fine on it.
    expect(
      await bootError({ name: 'gen', rate: 2 }, { store: new RatesOnlyStore() }),
    ).toBeUndefined();
  });

  it('module-wide concurrency limits are checked too, even when no route uses them', async () => {
    const error = await bootError(
      { name: 'other', rate: 5 },
      { limits: [{ name: 'cap', concurrency: 0 }] },
    );
    expect(error?.message).toBe(
      `RateLimit: RateLimitModule options, limit "cap": ${POSITIVE}, got 0`,
    );
  });
});

describe('concurrency: module-wide limits with bindGlobally: false', () => {
  const logs = silenceRateLimitLogs();

  it('warns that outside HTTP their slots are only taken where RateLimitInterceptor is bound', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        RateLimitModule.forRoot({
          bindGlobally: false,
          limits: [{ name: 'cap', concurrency: 10 }],
        }),
      ],
    }).compile();
    const app = moduleRef.createNestApplication(new ExpressAdapter(), { logger: false });
    await app.init();
    await app.close();
    const said = logs.warn.mock.calls
      .map(([message]) => String(message))
      .filter((message) => message.includes('bindGlobally is false'));
    expect(said).toEqual([
      'RateLimitModule: bindGlobally is false and the module limits or defaults have concurrency limits: outside HTTP (GraphQL, WebSocket, microservices) their slots are only taken where you bind RateLimitInterceptor (e.g. as APP_INTERCEPTOR); elsewhere they do not limit at all',
    ]);
  });
});
