import type { Type } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { RateLimitModule, type RateLimitModuleOptions } from 'nestjs-holdup';
import { controllerWith, OrdersController, ValidController } from './validation.fixtures.js';

const noop = (): undefined => undefined;

const RATE_PROBLEM =
  "must be a positive number of tokens per second or a string like '10/s' or '100/15min'";
const KEY_PROBLEM = "must be 'ip', 'user', 'global', 'connection', 'header:<name>' or a function";
const FAIL_MODE_PROBLEM = "must be 'open', 'closed' or 'local'";
const LOCAL_PROBLEM =
  "'local' needs a store that can decide locally when its shared backend fails (TwoTierStore); this store cannot";

/**
 * Boot a real application (compile + init, Express) and return what it failed with,
 * or undefined when it started (it is closed again either way).
 */
async function bootError(
  options: RateLimitModuleOptions | (() => ReturnType<typeof RateLimitModule.forRoot>),
  controllers: Type[] = [],
) {
  try {
    // Inside the try: forRootAsync() checks its own options when it is called.
    const rateLimitModule =
      typeof options === 'function' ? options() : RateLimitModule.forRoot(options);
    const moduleRef = await Test.createTestingModule({
      imports: [rateLimitModule],
      controllers,
    }).compile();
    const app = moduleRef.createNestApplication(new ExpressAdapter(), { logger: false });
    try {
      await app.init();
      // Started: prove it actually serves.
      await request(app.getHttpServer()).get('/valid').expect(200);
    } finally {
      await app.close();
    }
  } catch (error) {
    return error as Error;
  }
  return undefined;
}

/** Expect the boot to fail with a TypeError whose message is exactly `message`. */
async function expectBootFailure(
  options: Parameters<typeof bootError>[0],
  controllers: Type[],
  message: string,
) {
  const error = await bootError(options, controllers);
  expect(error).toBeInstanceOf(TypeError);
  expect(error?.message).toBe(message);
}

describe('start-up validation', () => {
  it('a valid configuration boots and serves (control)', async () => {
    expect(
      await bootError(
        {
          defaults: { rate: '60/min', key: 'ip' },
          limits: [{ name: 'cap', rate: 1000 }],
          headers: 'both',
          failMode: 'closed',
          trustProxy: ['10.0.0.0/8', '::1'],
        },
        [ValidController],
      ),
    ).toBeUndefined();
  });

  describe('route limits: the message names controller.handler, the limit and the option', () => {
    it.each([
      ['rate 0', { rate: 0 }, `rate ${RATE_PROBLEM}, got 0`],
      ['rate < 0', { rate: -5 }, `rate ${RATE_PROBLEM}, got -5`],
      ['rate missing', { burst: 3 }, `rate ${RATE_PROBLEM}, got undefined`],
      ["rate '10/fortnight'", { rate: '10/fortnight' }, `rate ${RATE_PROBLEM}, got "10/fortnight"`],
      ["rate 'abc'", { rate: 'abc' }, `rate ${RATE_PROBLEM}, got "abc"`],
      ["rate '0/s'", { rate: '0/s' }, `rate ${RATE_PROBLEM}, got "0/s"`],
      ["rate '10/0min'", { rate: '10/0min' }, `rate ${RATE_PROBLEM}, got "10/0min"`],
      ['burst 0', { rate: 1, burst: 0 }, 'burst must be a finite number >= 1, got 0'],
      ['burst 0.5', { rate: 1, burst: 0.5 }, 'burst must be a finite number >= 1, got 0.5'],
      ['burst NaN', { rate: 1, burst: NaN }, 'burst must be a finite number >= 1, got NaN'],
      [
        'burst Infinity',
        { rate: 1, burst: Infinity },
        'burst must be a finite number >= 1, got Infinity',
      ],
      [
        'cost 0',
        { rate: 1, burst: 2, cost: 0 },
        'cost must be a positive number or a function, got 0',
      ],
      [
        'cost < 0',
        { rate: 1, burst: 2, cost: -1 },
        'cost must be a positive number or a function, got -1',
      ],
      [
        "cost 'two'",
        { rate: 1, burst: 2, cost: 'two' },
        'cost must be a positive number or a function, got "two"',
      ],
      [
        "burst '5' (a string, as from an environment variable)",
        { rate: 1, burst: '5' },
        'burst must be a finite number >= 1, got "5"',
      ],
      [
        'burst true',
        { rate: 1, burst: true },
        'burst must be a finite number >= 1, got a boolean (true)',
      ],
      ['rate {}', { rate: {} }, `rate ${RATE_PROBLEM}, got an object`],
      [
        'cost > burst',
        { rate: 1, burst: 2, cost: 5 },
        'cost (5) is larger than burst (2): every request would be denied',
      ],
      [
        'cost > default burst (a number: one second of it)',
        { rate: 2, cost: 3 },
        'cost (3) is larger than burst (2): every request would be denied',
      ],
      [
        "cost > default burst (a string: its count, '10/min' holds 10)",
        { rate: '10/min', cost: 11 },
        'cost (11) is larger than burst (10): every request would be denied',
      ],
      ["key 'cookie'", { rate: 1, key: 'cookie' }, `key ${KEY_PROBLEM}, got "cookie"`],
      ["key 'header:'", { rate: 1, key: 'header:' }, `key ${KEY_PROBLEM}, got "header:"`],
      [
        "scope 'global'",
        { rate: 1, scope: 'global' },
        `scope must be 'route' or 'shared', got "global"`,
      ],
      [
        "failMode 'maybe'",
        { rate: 1, failMode: 'maybe' },
        `failMode ${FAIL_MODE_PROBLEM}, got "maybe"`,
      ],
      [
        "failMode 'local' on the (default) MemoryStore",
        { rate: 1, failMode: 'local' },
        `failMode ${LOCAL_PROBLEM}`,
      ],
      [
        "charge 'failure'",
        { rate: 1, charge: 'failure' },
        `charge must be 'always', 'failures' or 'successes', got "failure"`,
      ],
      [
        'isChargeFailure without charge',
        { rate: 1, isChargeFailure: (): boolean => true },
        "isChargeFailure only applies with charge: 'failures' or 'successes'; this limit counts every request",
      ],
      [
        'isFailure (the deprecated name of isChargeFailure) without charge',
        { rate: 1, isFailure: (): boolean => true },
        "isFailure only applies with charge: 'failures' or 'successes'; this limit counts every request",
      ],
      [
        'isChargeFailure and its deprecated name isFailure together',
        {
          rate: 1,
          charge: 'failures',
          isChargeFailure: (): boolean => true,
          isFailure: (): boolean => true,
        },
        'isFailure is the deprecated name of isChargeFailure: give only isChargeFailure',
      ],
      [
        'burst with a fixed window',
        { rate: '5/min', burst: 5, algorithm: 'fixed-window' },
        "burst has no meaning for a window: the quota is the rate's count ('100/min' admits 100 per minute); remove burst (algorithm 'fixed-window')",
      ],
      [
        'blockDuration with a sliding window',
        { rate: '5/min', blockDuration: '1h', algorithm: 'sliding-window' },
        "blockDuration only works with algorithm 'token-bucket' (a window cannot be blocked past its end) (algorithm 'sliding-window')",
      ],
      [
        'an unknown time zone',
        { rate: '5/day', algorithm: 'fixed-window', calendar: { timeZone: 'Europe/Pari' } },
        'calendar.timeZone is not a time zone this runtime knows (Intl.DateTimeFormat refused it), got "Europe/Pari"',
      ],
      [
        "'N/month' without calendar",
        { rate: '5/month', algorithm: 'fixed-window' },
        "rate can only count per month with calendar: {} (windows on calendar months); or write '/30d'",
      ],
    ])('%s', async (_case, limit, problem) => {
      await expectBootFailure(
        {},
        [controllerWith('BadController', limit)],
        `RateLimit: BadController.handler, limit "default": ${problem}`,
      );
    });

    it('rate NaN is reported as NaN', async () => {
      await expectBootFailure(
        {},
        [controllerWith('NanController', { rate: NaN })],
        `RateLimit: NanController.handler, limit "default": rate ${RATE_PROBLEM}, got NaN`,
      );
    });

    it('names the limit by its name', async () => {
      await expectBootFailure(
        {},
        [
          controllerWith('SearchController', [
            { name: 'ok', rate: 1 },
            { name: 'search', rate: 2, burst: 1, cost: 2 },
          ]),
        ],
        'RateLimit: SearchController.handler, limit "search": cost (2) is larger than burst (1): every request would be denied',
      );
    });

    it('an invalid limit name', async () => {
      await expectBootFailure(
        {},
        [controllerWith('NameController', { name: 'has "quotes"', rate: 1 })],
        'RateLimit: NameController.handler, limit "has "quotes"": name must be 1-64 characters of [A-Za-z0-9_.:-], got "has \\"quotes\\""',
      );
    });

    it('a bad class-level limit fails the boot too', async () => {
      await expectBootFailure(
        {},
        [controllerWith('ClassLevelController', { name: 'cls', rate: 'abc' }, { on: 'class' })],
        `RateLimit: ClassLevelController.handler, limit "cls": rate ${RATE_PROBLEM}, got "abc"`,
      );
    });

    it('duplicate names in one @RateLimit()', async () => {
      await expectBootFailure(
        {},
        [
          controllerWith('DupController', [
            { name: 'a', rate: 1 },
            { name: 'a', rate: 2 },
          ]),
        ],
        'RateLimit: DupController.handler: duplicate limit name "a" in the method @RateLimit(); give each limit its own name',
      );
    });

    it('two unnamed limits are both "default"', async () => {
      await expectBootFailure(
        {},
        [controllerWith('UnnamedController', [{ rate: 1 }, { rate: 2 }])],
        'RateLimit: UnnamedController.handler: duplicate limit name "default" in the method @RateLimit(); give each limit its own name',
      );
    });

    it('duplicate names across stacked @RateLimit() decorators', async () => {
      await expectBootFailure(
        {},
        [
          controllerWith(
            'StackedController',
            [
              { name: 'a', rate: 1 },
              { name: 'a', rate: 2 },
            ],
            { stacked: true },
          ),
        ],
        'RateLimit: StackedController.handler: duplicate limit name "a" in the method @RateLimit(); give each limit its own name',
      );
    });

    it('duplicate names on the class', async () => {
      await expectBootFailure(
        {},
        [
          controllerWith(
            'DupClassController',
            [
              { name: 'a', rate: 1 },
              { name: 'a', rate: 2 },
            ],
            { on: 'class' },
          ),
        ],
        'RateLimit: DupClassController.handler: duplicate limit name "a" in the class @RateLimit(); give each limit its own name',
      );
    });

    it('a bad limit in one controller fails the boot even when the others are fine', async () => {
      const error = await bootError({}, [
        ValidController,
        controllerWith('LateController', { rate: 1, burst: -1 }),
      ]);
      expect(error?.message).toBe(
        'RateLimit: LateController.handler, limit "default": burst must be a finite number >= 1, got -1',
      );
    });
  });

  describe('module options: the message names the option', () => {
    it.each([
      [
        "headers: 'x'",
        { headers: 'x' },
        `RateLimitModule: headers must be one of 'draft', 'draft-7', 'draft-6', 'legacy', 'both', false, got "x"`,
      ],
      [
        "headers: 'draft7'",
        { headers: 'draft7' },
        `RateLimitModule: headers must be one of 'draft', 'draft-7', 'draft-6', 'legacy', 'both', false, got "draft7" (did you mean 'draft-7'?)`,
      ],
      [
        'headers: true',
        { headers: true },
        `RateLimitModule: headers must be one of 'draft', 'draft-7', 'draft-6', 'legacy', 'both', false, got a boolean (true)`,
      ],
      [
        "failMode: 'maybe'",
        { failMode: 'maybe' },
        `RateLimitModule: failMode ${FAIL_MODE_PROBLEM}, got "maybe"`,
      ],
      [
        "failMode: 'local' on the (default) MemoryStore",
        { failMode: 'local' },
        `RateLimitModule: failMode ${LOCAL_PROBLEM}`,
      ],
      [
        'trustProxy: -1',
        { trustProxy: -1 },
        'RateLimitModule: trustProxy must be a boolean, a hop count (integer >= 0) or a list of addresses/CIDRs, got -1',
      ],
      [
        'trustProxy: 1.5',
        { trustProxy: 1.5 },
        'RateLimitModule: trustProxy must be a boolean, a hop count (integer >= 0) or a list of addresses/CIDRs, got 1.5',
      ],
      [
        "trustProxy: ['not-an-ip']",
        { trustProxy: ['not-an-ip'] },
        'RateLimitModule: trustProxy entry "not-an-ip" is not an IP address or CIDR',
      ],
      [
        "trustProxy: ['10.0.0.0/33']",
        { trustProxy: ['127.0.0.1', '10.0.0.0/33'] },
        'RateLimitModule: trustProxy entry "10.0.0.0/33" is not an IP address or CIDR',
      ],
      [
        "trustProxy: ['::1/129']",
        { trustProxy: ['::1/129'] },
        'RateLimitModule: trustProxy entry "::1/129" is not an IP address or CIDR',
      ],
      [
        "trustProxy: 'yes'",
        { trustProxy: 'yes' },
        'RateLimitModule: trustProxy must be a boolean, a hop count or a list of addresses/CIDRs, got "yes"',
      ],
      [
        "trustProxy: 'true' (a string, as from an environment variable)",
        { trustProxy: 'true' },
        'RateLimitModule: trustProxy must be a boolean, a hop count or a list of addresses/CIDRs, got "true"',
      ],
      [
        'trustProxy: {}',
        { trustProxy: {} },
        'RateLimitModule: trustProxy must be a boolean, a hop count or a list of addresses/CIDRs, got an object',
      ],
      [
        'store: {}',
        { store: {} },
        'RateLimitModule: store must implement RateLimitStore (missing consume())',
      ],
      [
        'store without close()',
        { store: { consume: noop, peek: noop, refund: noop, reset: noop } },
        'RateLimitModule: store must implement RateLimitStore (missing close())',
      ],
      [
        'store without refund() (store contract v1)',
        { store: { consume: noop, peek: noop, reset: noop, close: noop } },
        'RateLimitModule: store must implement RateLimitStore (missing refund())',
      ],
      [
        'clock: {}',
        { clock: {} },
        'RateLimitModule: clock must be an object with a now() method returning milliseconds',
      ],
      ['limits: {}', { limits: {} }, 'RateLimitModule: limits must be an array of limits'],
      ['defaults: 5', { defaults: 5 }, 'RateLimitModule: defaults must be a limit object'],
    ])('%s', async (_case, options, message) => {
      await expectBootFailure(options as RateLimitModuleOptions, [ValidController], message);
    });

    it.each([
      [
        'limits: [{ rate: 0 }]',
        { limits: [{ rate: 0 }] },
        `RateLimit: RateLimitModule options, limit "default": rate ${RATE_PROBLEM}, got 0`,
      ],
      [
        "limits: [{ name: 'cap', rate: 1, burst: 0.5 }]",
        {
          limits: [
            { name: 'ok', rate: 1 },
            { name: 'cap', rate: 1, burst: 0.5 },
          ],
        },
        'RateLimit: RateLimitModule options, limit "cap": burst must be a finite number >= 1, got 0.5',
      ],
      [
        'limits with a duplicate name',
        {
          limits: [
            { name: 'cap', rate: 1 },
            { name: 'cap', rate: 2 },
          ],
        },
        'RateLimit: RateLimitModule options: duplicate limit name "cap" in the module limits; give each limit its own name',
      ],
      [
        "defaults: { rate: 'abc' }",
        { defaults: { rate: 'abc' } },
        `RateLimit: RateLimitModule options, limit "default": rate ${RATE_PROBLEM}, got "abc"`,
      ],
      [
        "defaults: { rate: 1, key: 'cookie' }",
        { defaults: { rate: 1, key: 'cookie' } },
        `RateLimit: RateLimitModule options, limit "default": key ${KEY_PROBLEM}, got "cookie"`,
      ],
      [
        'defaults: { rate: 1, burst: 2, cost: 3 }',
        { defaults: { rate: 1, burst: 2, cost: 3 } },
        'RateLimit: RateLimitModule options, limit "default": cost (3) is larger than burst (2): every request would be denied',
      ],
    ])('%s (checked even when no route uses it)', async (_case, options, message) => {
      await expectBootFailure(options as RateLimitModuleOptions, [], message);
    });

    it("defaults.key 'cookie' is also every route limit's default key", async () => {
      // The module-wide check reports it first; either way the boot fails naming "key".
      const error = await bootError({ defaults: { rate: 1, key: 'cookie' as 'ip' } }, [
        controllerWith('KeyedController', { rate: 1 }),
      ]);
      expect(error?.message).toMatch(/limit "default": key must be .* got "cookie"$/);
    });

    it('forRootAsync: bad options from the factory fail the boot the same way', async () => {
      const error = await bootError(
        () =>
          RateLimitModule.forRootAsync({
            useFactory: async () => ({ failMode: 'maybe' as 'open' }),
          }),
        [ValidController],
      );
      expect(error).toBeInstanceOf(TypeError);
      expect(error?.message).toBe(`RateLimitModule: failMode ${FAIL_MODE_PROBLEM}, got "maybe"`);
    });
  });

  describe('misspelt option names fail the boot, naming the closest known name', () => {
    it('a decorator limit: @RateLimit({ rate, brust })', async () => {
      await expectBootFailure(
        {},
        [ValidController, OrdersController],
        'RateLimit: OrdersController.search, limit "default": brust is not an option (did you mean burst?)',
      );
    });

    it.each([
      [
        'brust in defaults',
        { defaults: { rate: '2/min', brust: 20 } },
        'RateLimit: RateLimitModule options, limit "default": brust is not an option (did you mean burst?)',
      ],
      [
        'rat in a module limit',
        { limits: [{ name: 'cap', rat: 100 }] },
        'RateLimit: RateLimitModule options, limit "cap": rat is not an option (did you mean rate?)',
      ],
      [
        'adaptive.mni in defaults',
        { defaults: { rate: 100, adaptive: { mni: 5 } } },
        'RateLimit: RateLimitModule options, limit "default": adaptive.mni is not an option (did you mean min?)',
      ],
      [
        "penalty (rate-limiter-flexible's name) in defaults",
        { defaults: { rate: 1, penalty: 60 } },
        'RateLimit: RateLimitModule options, limit "default": penalty is not an option (known options: name, rate, burst, cost, key, scope, failMode, adaptive, charge, isChargeFailure, isFailure, skip, shadow, blockDuration, maxDelay, settle, concurrency, leaseTimeout, algorithm, calendar)',
      ],
      [
        'default: for defaults',
        { default: { rate: '2/min' } },
        'RateLimitModule: default is not an option (did you mean defaults?)',
      ],
      [
        'trustproxy: for trustProxy',
        { trustproxy: true },
        'RateLimitModule: trustproxy is not an option (did you mean trustProxy?)',
      ],
    ])('forRoot: %s', async (_case, options, message) => {
      await expectBootFailure(options as RateLimitModuleOptions, [ValidController], message);
    });

    it.each(['bindGlobally', 'global'])(
      'forRoot({ %s: false }) with correct options still boots (Nest keeps it out of the options)',
      async (extra) => {
        expect(
          await bootError(
            () =>
              RateLimitModule.forRoot({
                [extra]: false,
                defaults: { rate: '2/min', burst: 20 },
              }),
            [ValidController],
          ),
        ).toBeUndefined();
      },
    );

    it('forRoot: bindGlobally and its deprecated name global together', async () => {
      await expectBootFailure(
        () => RateLimitModule.forRoot({ bindGlobally: false, global: false }),
        [ValidController],
        'RateLimitModule.forRoot: global is the deprecated name of bindGlobally: give only bindGlobally',
      );
    });

    it('forRootAsync: a misspelt option in what the factory returns', async () => {
      await expectBootFailure(
        () =>
          RateLimitModule.forRootAsync({
            useFactory: () => ({ trustproxy: true }) as RateLimitModuleOptions,
          }),
        [ValidController],
        'RateLimitModule: trustproxy is not an option (did you mean trustProxy?)',
      );
    });

    it.each(['bindGlobally', 'global'])(
      'forRootAsync: %s returned by the factory, where it would be ignored',
      async (extra) => {
        await expectBootFailure(
          () =>
            RateLimitModule.forRootAsync({
              useFactory: () => ({ [extra]: false }) as RateLimitModuleOptions,
            }),
          [ValidController],
          `RateLimitModule: ${extra} belongs in forRootAsync()'s own options (next to useFactory or useClass), not in the options they return, where it would be ignored`,
        );
      },
    );

    it.each([
      [
        'useFactroy',
        { useFactroy: () => ({}) },
        'RateLimitModule.forRootAsync: useFactroy is not an option (did you mean useFactory?)',
      ],
      [
        'globl',
        { useFactory: () => ({}), globl: false },
        'RateLimitModule.forRootAsync: globl is not an option (did you mean global?)',
      ],
    ])('forRootAsync: %s in its own options', async (_case, options, message) => {
      await expectBootFailure(
        () => RateLimitModule.forRootAsync(options as never),
        [ValidController],
        message,
      );
    });

    it('forRootAsync: correct options still boot', async () => {
      expect(
        await bootError(
          () =>
            RateLimitModule.forRootAsync({
              bindGlobally: true,
              useFactory: () => ({ trustProxy: true, defaults: { rate: '2/min', burst: 20 } }),
            }),
          [ValidController],
        ),
      ).toBeUndefined();
    });
  });
});
