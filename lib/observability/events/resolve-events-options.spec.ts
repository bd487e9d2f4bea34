import { resolveModuleOptions } from '../../resolve-module-options.js';
import type { RateLimitModuleOptions } from '../../interfaces/rate-limit-module-options.interface.js';

const resolve = (events: unknown) => () =>
  resolveModuleOptions({ events } as RateLimitModuleOptions);

describe('the events option', () => {
  it('defaults to no forwarding; eventEmitter: true forwards', () => {
    expect(resolveModuleOptions({}).events).toEqual({ eventEmitter: false });
    expect(resolveModuleOptions({ events: { eventEmitter: true } }).events).toEqual({
      eventEmitter: true,
    });
  });

  it.each([
    [
      { eventEmiter: true },
      'RateLimitModule: events.eventEmiter is not an option (did you mean eventEmitter?)',
    ],
    [
      { emitter: true },
      'RateLimitModule: events.emitter is not an option (known options: eventEmitter)',
    ],
    [{ eventEmitter: 'yes' }, 'RateLimitModule: events.eventEmitter must be a boolean, got "yes"'],
    [
      true,
      'RateLimitModule: events must be an object like { eventEmitter: true }, got a boolean (true)',
    ],
  ])('%j is refused', (events, message) => {
    expect(resolve(events)).toThrow(new TypeError(message));
  });

  it('gives every module instance its own owner identity', () => {
    expect(resolveModuleOptions({}).owner).not.toBe(resolveModuleOptions({}).owner);
  });
});
