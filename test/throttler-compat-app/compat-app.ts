import { Controller, Get, Injectable } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ManualClock } from 'nestjs-holdup';
import {
  SkipThrottle,
  Throttle,
  ThrottlerGuard,
  ThrottlerModule,
  seconds,
  type ThrottlerModuleOptions,
} from 'nestjs-holdup/throttler-compat';

/** A guard subclass as throttler users write them: the caller is a header (a proxy, an API key). */
@Injectable()
export class ApiKeyThrottlerGuard extends ThrottlerGuard {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- throttler's signature
  protected override async getTracker(req: Record<string, any>): Promise<string> {
    return (req.headers['x-api-key'] as string | undefined) ?? (req.ip as string);
  }
}

@Controller()
@Throttle({ default: { limit: 2, ttl: seconds(10), blockDuration: seconds(30) } })
export class CompatController {
  @Get('items')
  items() {
    return { ok: true };
  }

  @SkipThrottle()
  @Get('health')
  health() {
    return { ok: true };
  }
}

/** What the compat module options add to throttler's (storage, headers, failMode), for the variants. */
export type CompatExtras = Partial<Exclude<ThrottlerModuleOptions, unknown[]>>;

/**
 * The app under test: throttler's names, a ManualClock (not in throttler:
 * the compat's `clock`); `extras` adds a store, the headers or a fail mode.
 */
export function compatModule(clock: ManualClock, extras: CompatExtras = {}) {
  return {
    imports: [
      ThrottlerModule.forRoot({ throttlers: [{ limit: 5, ttl: seconds(60) }], clock, ...extras }),
    ],
    controllers: [CompatController],
    providers: [{ provide: APP_GUARD, useClass: ApiKeyThrottlerGuard }],
  };
}
