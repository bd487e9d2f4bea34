import { Controller, Get, Injectable, Post, Query, type ExecutionContext } from '@nestjs/common';
import {
  RateLimit,
  RateLimiter,
  SkipRateLimit,
  type ProgrammaticLimit,
  type RateLimitDecision,
} from 'nestjs-holdup';

/** The login limit, as the route declares it and as application code names it. */
export const LOGIN = {
  name: 'login',
  rate: '1/min',
  burst: 2,
} as const satisfies ProgrammaticLimit;
export const JOBS = { name: 'jobs', rate: 1, burst: 3 } as const satisfies ProgrammaticLimit;

const emailOf = (context: ExecutionContext) =>
  context.switchToHttp().getRequest<{ query: { email?: string } }>().query.email;

/** Application code using the limiter outside any route: a job runner. */
@Injectable()
export class JobRunner {
  constructor(readonly limiter: RateLimiter) {}

  tryRun(tenant: string, cost?: number): Promise<RateLimitDecision> {
    return this.limiter.consume(tenant, JOBS, cost === undefined ? {} : { cost });
  }
}

@Controller('auth')
export class AuthController {
  constructor(private readonly limiter: RateLimiter) {}

  /** One bucket per e-mail address, shared by every route using the "login" limit. */
  @RateLimit({ ...LOGIN, scope: 'shared', key: emailOf })
  @Post('login')
  login() {
    return { ok: true };
  }

  /** After a successful password reset, say: give the address its attempts back. */
  @SkipRateLimit()
  @Post('unlock')
  async unlock(@Query('email') email: string) {
    // As documented: the limit's name (and a valid rate) is all reset needs.
    await this.limiter.reset(email, { name: 'login', rate: '1/min' });
    return { unlocked: email };
  }

  @SkipRateLimit()
  @Get('attempts')
  async attempts(@Query('email') email: string) {
    const { remaining, resetMs } = await this.limiter.peek(email, LOGIN);
    return { remaining, resetMs };
  }

  /** Charge a login attempt from elsewhere (e.g. a failed SSO callback). */
  @SkipRateLimit()
  @Post('charge')
  async charge(@Query('email') email: string) {
    return this.limiter.consume(email, LOGIN);
  }
}
