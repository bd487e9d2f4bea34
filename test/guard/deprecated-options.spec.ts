/**
 * The names renamed in 0.2.0 still work for one minor version, and each one
 * in use is said once at start-up, naming the old option, the new one and
 * where: the limit's `isFailure` (now `isChargeFailure`), `adaptive.isFailure`
 * (now `adaptive.isServerFailure`), the module's `global` (now
 * `bindGlobally`) and `hotKeys.windowMs` (now `hotKeys.window`).
 */
import { ConflictException, Controller, Get, HttpException } from '@nestjs/common';
import { RateLimit, type RateLimitOptions } from 'nestjs-holdup';
import { createGuardHarness, type GuardHarness } from '../utils/guard-harness.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';

const only409 = ({ error }: { error: unknown }) =>
  error instanceof HttpException && error.getStatus() === 409;

/** A class limit reaches every route of the class: its deprecated name is listed once. */
@RateLimit({
  name: 'conflicts',
  rate: '2/hour',
  charge: 'failures',
  isFailure: only409,
} as RateLimitOptions)
@Controller('legacy')
class LegacyController {
  @Get('one')
  one() {}

  @Get('two')
  two() {}

  @RateLimit({ name: 'adaptive', rate: 100, adaptive: { isFailure: () => false } })
  @Get('adaptive')
  adaptive() {}
}

@Controller('current')
class CurrentController {
  @RateLimit({ name: 'conflicts', rate: '2/hour', charge: 'failures', isChargeFailure: only409 })
  @Get()
  index() {}
}

const deprecations = (messages: string[]) => messages.filter((m) => m.includes('deprecated'));

describe('guard: deprecated option names', () => {
  const logs = silenceRateLimitLogs();
  let h: GuardHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('work as the new names do, and each is said once at start-up with its new name and where', async () => {
    h = await createGuardHarness(LegacyController, {
      global: true,
      hotKeys: { windowMs: '5min' },
    } as never);
    expect(deprecations(logs.messages('warn'))).toEqual([
      'RateLimitModule: hotKeys.windowMs is deprecated, use hotKeys.window instead (same meaning); hotKeys.windowMs still works in 0.2.x and will be removed in 0.3.0. Used by: RateLimitModule options. (Said once.)',
      'RateLimitModule: global is deprecated, use bindGlobally instead (same meaning); global still works in 0.2.x and will be removed in 0.3.0. Used by: RateLimitModule.forRoot({ global }). (Said once.)',
      'RateLimitModule: isFailure is deprecated, use isChargeFailure instead (same meaning); isFailure still works in 0.2.x and will be removed in 0.3.0. Used by: LegacyController.one, limit "conflicts". (Said once.)',
      'RateLimitModule: adaptive.isFailure is deprecated, use adaptive.isServerFailure instead (same meaning); adaptive.isFailure still works in 0.2.x and will be removed in 0.3.0. Used by: LegacyController.adaptive, limit "adaptive". (Said once.)',
    ]);

    // isFailure still decides what counts: a 400 is given back, a 409 is not.
    logs.clear();
    const reject = (error: unknown) => () => Promise.reject(error);
    for (let i = 0; i < 3; i++)
      expect((await h.call('one', reject(new HttpException('bad', 400)))).status).toBe(200);
    for (let i = 0; i < 2; i++)
      expect((await h.call('one', reject(new ConflictException()))).handler?.error).toBeInstanceOf(
        ConflictException,
      );
    expect((await h.call('one', () => Promise.resolve())).status).toBe(429);
    // Nothing more is said per request, nor on later compilations.
    expect(deprecations(logs.messages())).toEqual([]);
  });

  it('the new names say nothing', async () => {
    h = await createGuardHarness(CurrentController, {
      bindGlobally: true,
      hotKeys: { window: '5min' },
    } as never);
    expect(deprecations(logs.messages())).toEqual([]);
  });
});
