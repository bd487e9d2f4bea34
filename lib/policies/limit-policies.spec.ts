import { limitContext } from '../../test/utils/limit-context.js';
import type { RateLimitOptions } from '../interfaces/rate-limit-options.interface.js';
import { resolveConcurrencyLimit } from '../concurrency/resolve-concurrency-limit.js';
import { LIMIT_OPTIONS, resolveLimit, type LimitContext } from '../limits/resolve-limit.js';
import { LIMIT_POLICIES } from './limit-policies.js';
import type { PolicyField } from './limit-policy.js';

const context: LimitContext = limitContext();

/** Every option of a limit, as the compiler knows them: a new one fails to compile here until it is listed. */
const EVERY_OPTION: Record<keyof Required<RateLimitOptions>, true> = {
  name: true,
  rate: true,
  burst: true,
  cost: true,
  key: true,
  scope: true,
  failMode: true,
  adaptive: true,
  charge: true,
  isChargeFailure: true,
  isFailure: true, // deprecated name of isChargeFailure, still accepted
  skip: true,
  shadow: true,
  blockDuration: true,
  maxDelay: true,
  concurrency: true,
  leaseTimeout: true,
  algorithm: true,
  calendar: true,
  settle: true,
};

/** The fields the registry owns: a new one fails to compile here until it is listed. */
const POLICY_FIELDS: Record<PolicyField, true> = {
  dynamic: true,
  adaptive: true,
  shadow: true,
  charge: true,
  skip: true,
  blockMs: true,
  maxDelayMs: true,
  settle: true,
};

describe('the limit policy registry', () => {
  it('knows every option of the options type, once (a policy forgotten in the registry would refuse its own option)', () => {
    expect([...LIMIT_OPTIONS].sort()).toEqual(Object.keys(EVERY_OPTION).sort());
  });

  it('fills every policy field of a resolved limit, even on a limit with no policy option', () => {
    const limit = resolveLimit({ rate: 5 }, context) as unknown as Record<string, unknown>;
    for (const field of Object.keys(POLICY_FIELDS)) expect(field in limit).toBe(true);
  });

  it("a concurrency limit refuses each policy's options with the policy's reason", () => {
    for (const policy of LIMIT_POLICIES) {
      for (const [option, why] of Object.entries(policy.refusedOnConcurrency ?? {})) {
        expect(() =>
          resolveConcurrencyLimit({ concurrency: 2, [option]: 1 } as RateLimitOptions, {
            ...context,
            storeSlots: true,
          }),
        ).toThrow(`${option} cannot be combined with concurrency: ${why}`);
      }
    }
  });

  it('resolves in registry order: shadow sees what adaptive and charge resolved', () => {
    expect(() => resolveLimit({ rate: 5, shadow: true, charge: 'failures' }, context)).toThrow(
      "shadow cannot be combined with charge: 'failures' (its tokens would never be given back)",
    );
    expect(() => resolveLimit({ rate: 5, shadow: true, adaptive: { min: 1 } }, context)).toThrow(
      'shadow cannot be combined with adaptive',
    );
  });
});
