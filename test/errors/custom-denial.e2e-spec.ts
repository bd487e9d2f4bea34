/**
 * Changing what a 429 says (docs/errors.md), on Express and Fastify: the
 * message, through a `RateLimitGuard` subclass whose `throwRateLimitException`
 * throws a `RateLimitExceededException` of its own (in either `errorFormat`);
 * a body of the application's own shape, through the same hook throwing any
 * `HttpException`; and every 429 reshaped by an exception filter of the
 * application, the guard's and `RateLimiter.enforce()`'s alike. The
 * rate-limit headers and `Retry-After` stay in every case.
 */
import request from 'supertest';
import {
  Catch,
  Controller,
  Get,
  HttpException,
  Injectable,
  type ArgumentsHost,
  type ExceptionFilter,
  type ExecutionContext,
  type INestApplication,
  type Provider,
  UseFilters,
} from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import {
  ManualClock,
  RateLimit,
  RateLimitExceededException,
  RateLimitGuard,
  RateLimitModule,
  RateLimiter,
  SkipRateLimit,
  type RateLimitDenial,
  type RateLimitTypes,
} from 'nestjs-holdup';

type ErrorFormat = RateLimitTypes.ErrorFormat;
import { createApp, PLATFORMS } from '../utils/create-app.js';

@Controller('custom')
class CustomController {
  constructor(private readonly limiter: RateLimiter) {}

  @RateLimit({ name: 'search', rate: 1, burst: 1 })
  @Get()
  index() {
    return 'ok';
  }

  @SkipRateLimit()
  @Get('enforced')
  async enforced() {
    await this.limiter.enforce('someone', { name: 'jobs', rate: 1, burst: 1 });
    return 'ok';
  }
}

/** Another message, in the module's format; everything else as the guard would have it. */
@Injectable()
class PoliteGuard extends RateLimitGuard {
  protected override throwRateLimitException(
    _context: ExecutionContext,
    denial: RateLimitDenial,
  ): never {
    throw new RateLimitExceededException(
      denial.retryAfter,
      denial.decisions,
      'Slow down: one search a second',
      { limits: denial.limits, errorFormat: currentFormat },
    );
  }
}
let currentFormat: ErrorFormat = 'nest';

/** A body of the application's own shape: any exception. */
@Injectable()
class OwnBodyGuard extends RateLimitGuard {
  protected override throwRateLimitException(
    _context: ExecutionContext,
    denial: RateLimitDenial,
  ): never {
    throw new HttpException(
      { error: 'rate_limited', retryInSeconds: denial.retryAfter ?? null },
      429,
    );
  }
}

/** Every 429 (the guard's, enforce()'s) reshaped by the application. */
@Catch(RateLimitExceededException)
class RateLimitBodyFilter implements ExceptionFilter {
  catch(exception: RateLimitExceededException, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<{
      status?(code: number): unknown;
      code?(code: number): unknown;
      header(name: string, value: string): unknown;
      send(body: string): unknown;
    }>();
    const body = JSON.stringify({
      code: 'RATE_LIMITED',
      limits: exception.limits.map((limit) => limit.name),
      retryAfter: exception.retryAfter ?? null,
    });
    // enforce()'s exception has not been through the guard: its Retry-After is written here.
    if (exception.retryAfter !== undefined)
      response.header('Retry-After', String(exception.retryAfter));
    response.header('Content-Type', 'application/json');
    if (response.code) response.code(429);
    else response.status!(429);
    response.send(body);
  }
}

/** The filter bound where Nest tries it before the module's global one: on the controller. */
@UseFilters(RateLimitBodyFilter)
@Controller('filtered')
class FilteredController extends CustomController {}

describe.each(PLATFORMS)('changing the 429 body and message (%s)', (platform) => {
  let app: INestApplication;
  const boot = async (providers: Provider[], errorFormat: ErrorFormat = 'nest') => {
    currentFormat = errorFormat;
    app = await createApp(platform, {
      imports: [
        RateLimitModule.forRoot({
          clock: new ManualClock(50_000_000),
          errorFormat,
          bindGlobally: false,
        }),
      ],
      controllers: [CustomController, FilteredController],
      providers,
    });
  };
  afterEach(() => app?.close());
  const denied = async (path = '/custom') => {
    const server = app.getHttpServer();
    expect((await request(server).get(path)).status).toBe(200);
    const res = await request(server).get(path);
    return {
      status: res.status,
      type: res.headers['content-type']?.split(';')[0],
      body: res.body as unknown,
      retryAfter: res.headers['retry-after'],
      rateLimit: res.headers['ratelimit'],
    };
  };

  it("a guard subclass's throwRateLimitException: another message, in the 'nest' format", async () => {
    await boot([{ provide: APP_GUARD, useClass: PoliteGuard }]);
    expect(await denied()).toEqual({
      status: 429,
      type: 'application/json',
      body: { statusCode: 429, message: 'Slow down: one search a second', retryAfter: 1 },
      retryAfter: '1',
      rateLimit: '"search";r=0;t=1',
    });
  });

  it("the same, in 'problem+json': the message is the detail's", async () => {
    await boot([{ provide: APP_GUARD, useClass: PoliteGuard }], 'problem+json');
    expect(await denied()).toMatchObject({
      status: 429,
      type: 'application/problem+json',
      body: {
        status: 429,
        detail: 'Slow down: one search a second: retry in 1 second',
        'violated-policies': ['search'],
        retryAfter: 1,
      },
      retryAfter: '1',
      rateLimit: '"search";r=0;t=1',
    });
  });

  it('a guard subclass throwing its own HttpException: a body of any shape, the headers kept', async () => {
    await boot([{ provide: APP_GUARD, useClass: OwnBodyGuard }]);
    expect(await denied()).toEqual({
      status: 429,
      type: 'application/json',
      body: { error: 'rate_limited', retryInSeconds: 1 },
      retryAfter: '1',
      rateLimit: '"search";r=0;t=1',
    });
  });

  it("an application filter for RateLimitExceededException on the controller: the guard's 429 and enforce()'s", async () => {
    await boot([{ provide: APP_GUARD, useExisting: RateLimitGuard }]);
    expect(await denied('/filtered')).toEqual({
      status: 429,
      type: 'application/json',
      body: { code: 'RATE_LIMITED', limits: ['search'], retryAfter: 1 },
      retryAfter: '1',
      rateLimit: '"search";r=0;t=1',
    });
    expect(await denied('/filtered/enforced')).toEqual({
      status: 429,
      type: 'application/json',
      body: { code: 'RATE_LIMITED', limits: ['jobs'], retryAfter: 1 },
      retryAfter: '1',
      rateLimit: undefined,
    });
  });

  it("an application-wide APP_FILTER does not take over: the module's own filter is global too, and Nest tries it first", async () => {
    await boot([
      { provide: APP_GUARD, useExisting: RateLimitGuard },
      { provide: APP_FILTER, useClass: RateLimitBodyFilter },
    ]);
    expect((await denied()).body).toEqual({
      statusCode: 429,
      message: 'Too Many Requests',
      retryAfter: 1,
    });
  });
});
