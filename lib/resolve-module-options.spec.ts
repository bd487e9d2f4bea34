import 'reflect-metadata';
import type { DynamicModule, ValueProvider } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ManualClock } from './clock.js';
import type { RateLimitModuleOptions } from './interfaces/rate-limit-module-options.interface.js';
import { MemoryStore } from '../adapters/memory/memory.store.js';
import { checkAsyncOptions, RATE_LIMIT_MODULE_OPTIONS } from './rate-limit.module-definition.js';
import { RateLimitModule } from './rate-limit.module.js';
import { resolveModuleOptions } from './resolve-module-options.js';

const resolve = (options: unknown) => () => resolveModuleOptions(options as RateLimitModuleOptions);

describe('module options: unknown names', () => {
  it('a complete, correct option set is accepted', () => {
    const options: RateLimitModuleOptions = {
      store: new MemoryStore(),
      defaults: { rate: '2/min', burst: 20 },
      limits: [{ name: 'cap', rate: 100 }],
      headers: 'both',
      failMode: 'closed',
      trustProxy: 1,
      clock: new ManualClock(0),
    };
    expect(resolveModuleOptions(options).headers).toBe('both');
    // Listed ahead of its implementation (added in parallel): not refused as unknown.
    expect(resolve({ ipv6Subnet: 64 })).not.toThrow();
  });

  it.each([
    [
      { trustproxy: true },
      'RateLimitModule: trustproxy is not an option (did you mean trustProxy?)',
    ],
    [
      { default: { rate: 1 } },
      'RateLimitModule: default is not an option (did you mean defaults?)',
    ],
    [{ limit: [] }, 'RateLimitModule: limit is not an option (did you mean limits?)'],
    [{ header: 'legacy' }, 'RateLimitModule: header is not an option (did you mean headers?)'],
    [{ failmode: 'closed' }, 'RateLimitModule: failmode is not an option (did you mean failMode?)'],
    [
      { blockDuration: 60 },
      'RateLimitModule: blockDuration is not an option (known options: store, defaults, limits, headers, errorFormat, failMode, trustProxy, clock, ipv6Subnet, skip, allowList, shadow, metrics, events, hotKeys)',
    ],
  ])('%j is refused', (options, message) => {
    expect(resolve(options)).toThrow(new TypeError(message));
  });

  it.each(['bindGlobally', 'global'])(
    'refuses %s in the options a forRootAsync() factory returns (it would be ignored there)',
    (extra) => {
      expect(resolve({ [extra]: false })).toThrow(
        new TypeError(
          `RateLimitModule: ${extra} belongs in forRootAsync()'s own options (next to useFactory or useClass), not in the options they return, where it would be ignored`,
        ),
      );
    },
  );

  it.each([{ bindGlobally: false }, { global: false }, { bindGlobally: true }])(
    'forRoot(%j) is fine: Nest strips the extra before the options are resolved',
    (extra) => {
      const definition = RateLimitModule.forRoot({ ...extra, headers: 'legacy' });
      const provider = definition.providers!.find(
        (p): p is ValueProvider =>
          typeof p === 'object' && 'provide' in p && p.provide === RATE_LIMIT_MODULE_OPTIONS,
      );
      expect(provider?.useValue).toEqual({ headers: 'legacy' });
      expect(resolveModuleOptions(provider!.useValue as RateLimitModuleOptions).headers).toBe(
        'legacy',
      );
    },
  );

  it('binds the guard app-wide unless bindGlobally (or the deprecated global) is false', () => {
    const appGuard = (definition: DynamicModule) =>
      definition.providers!.some(
        (p) => typeof p === 'object' && 'provide' in p && p.provide === APP_GUARD,
      );
    expect(appGuard(RateLimitModule.forRoot())).toBe(true);
    expect(appGuard(RateLimitModule.forRoot({ bindGlobally: true }))).toBe(true);
    expect(appGuard(RateLimitModule.forRoot({ bindGlobally: false }))).toBe(false);
    expect(appGuard(RateLimitModule.forRoot({ global: false }))).toBe(false);
    expect(
      appGuard(RateLimitModule.forRootAsync({ useFactory: () => ({}), bindGlobally: false })),
    ).toBe(false);
    expect(() => RateLimitModule.forRoot({ bindGlobally: 'no' as never })).toThrow(
      'RateLimitModule.forRoot: bindGlobally must be a boolean, got "no"',
    );
  });

  it('shows values by type', () => {
    expect(resolve({ headers: true })).toThrow(
      "RateLimitModule: headers must be one of 'draft', 'draft-7', 'draft-6', 'legacy', 'both', false, got a boolean (true)",
    );
    expect(resolve({ trustProxy: 'true' })).toThrow(
      'RateLimitModule: trustProxy must be a boolean, a hop count or a list of addresses/CIDRs, got "true"',
    );
    expect(resolve({ trustProxy: {} })).toThrow(
      'RateLimitModule: trustProxy must be a boolean, a hop count or a list of addresses/CIDRs, got an object',
    );
  });
});

describe('forRootAsync() options', () => {
  const useFactory = () => ({});

  it('the async options Nest knows, and bindGlobally (or global), are accepted', () => {
    class Config {
      createRateLimitOptions() {
        return {};
      }
    }
    for (const options of [
      { useFactory, inject: [], imports: [], provideInjectionTokensFrom: [], bindGlobally: false },
      { useFactory, global: false },
      { useClass: Config },
      { useExisting: Config },
    ]) {
      expect(() => checkAsyncOptions(options)).not.toThrow();
      expect(RateLimitModule.forRootAsync(options)).toEqual(
        expect.objectContaining({ module: RateLimitModule }) as DynamicModule,
      );
    }
  });

  it.each([
    [
      { useFactroy: useFactory },
      'RateLimitModule.forRootAsync: useFactroy is not an option (did you mean useFactory?)',
    ],
    [
      { useFactory, globl: false },
      'RateLimitModule.forRootAsync: globl is not an option (did you mean global?)',
    ],
    [
      { useFactory, injects: [] },
      'RateLimitModule.forRootAsync: injects is not an option (did you mean inject?)',
    ],
    [
      { useclass: class {} },
      'RateLimitModule.forRootAsync: useclass is not an option (did you mean useClass?)',
    ],
    [
      { inject: [] },
      'RateLimitModule.forRootAsync: options must have useFactory, useClass or useExisting',
    ],
  ])('%p is refused when forRootAsync() is called', (options, message) => {
    expect(() => RateLimitModule.forRootAsync(options as never)).toThrow(new TypeError(message));
  });
});
