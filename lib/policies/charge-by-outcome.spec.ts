import { BadRequestException, type ExecutionContext } from '@nestjs/common';
import { RateLimitExceededException } from '../errors/rate-limit-exceeded.exception.js';
import type { RateLimitOutcome } from '../interfaces/rate-limit-options.interface.js';
import {
  checksToRefund,
  failedByDefault,
  keepsCharge,
  resolveChargePolicy,
} from './charge-by-outcome.js';

const fail = (option: string, problem: string): never => {
  throw new TypeError(`${option} ${problem}`);
};
const outcome = (failed: boolean, error?: unknown): RateLimitOutcome => ({
  error,
  response: undefined,
  context: {} as ExecutionContext,
  failed,
});

describe('resolveChargePolicy', () => {
  it("'always' (or nothing) needs no work after the handler", () => {
    expect(resolveChargePolicy(undefined, undefined, fail)).toBeUndefined();
    expect(resolveChargePolicy('always', undefined, fail)).toBeUndefined();
  });

  it('failures and successes, with or without a predicate', () => {
    const isFailure = () => true;
    expect(resolveChargePolicy('failures', undefined, fail)).toEqual({
      mode: 'failures',
      isFailure: undefined,
    });
    expect(resolveChargePolicy('successes', isFailure, fail)).toEqual({
      mode: 'successes',
      isFailure,
    });
  });

  it('refuses what it cannot mean, naming the option', () => {
    expect(() => resolveChargePolicy('failure', undefined, fail)).toThrow(
      `charge must be 'always', 'failures' or 'successes', got "failure"`,
    );
    expect(() => resolveChargePolicy('failures', 'yes', fail)).toThrow(
      'isChargeFailure must be a function (outcome) => boolean, got "yes"',
    );
    expect(() => resolveChargePolicy(undefined, () => true, fail)).toThrow(
      "isChargeFailure only applies with charge: 'failures' or 'successes'",
    );
    // Declared under its deprecated name, the predicate is named as declared.
    expect(() => resolveChargePolicy('failures', 'yes', fail, 'isFailure')).toThrow(
      'isFailure must be a function (outcome) => boolean, got "yes"',
    );
  });
});

describe('failedByDefault', () => {
  it("a thrown error fails, except the limiter's own 429", () => {
    expect(failedByDefault(new BadRequestException(), undefined)).toBe(true);
    expect(failedByDefault(new Error('boom'), undefined)).toBe(true);
    expect(failedByDefault(new RateLimitExceededException(1), undefined)).toBe(false);
  });

  it('a status of 400 or more fails; no status (WebSocket, RPC) does not', () => {
    expect(failedByDefault(undefined, { statusCode: 200 })).toBe(false);
    expect(failedByDefault(undefined, { statusCode: 399 })).toBe(false);
    expect(failedByDefault(undefined, { statusCode: 400 })).toBe(true);
    expect(failedByDefault(undefined, undefined)).toBe(false);
  });
});

describe('keepsCharge and checksToRefund', () => {
  const failures = { mode: 'failures', isFailure: undefined } as const;
  const successes = { mode: 'successes', isFailure: undefined } as const;

  it('failures keep the charge of a failure only; successes of a success only', () => {
    expect([keepsCharge(failures, outcome(true)), keepsCharge(failures, outcome(false))]).toEqual([
      true,
      false,
    ]);
    expect([keepsCharge(successes, outcome(true)), keepsCharge(successes, outcome(false))]).toEqual(
      [false, true],
    );
  });

  it('a predicate overrides the default verdict; only a strict true is a failure', () => {
    const only409 = {
      mode: 'failures',
      isFailure: (o: RateLimitOutcome) => o.error === 409,
    } as const;
    expect(keepsCharge(only409, outcome(true, 500))).toBe(false);
    expect(keepsCharge(only409, outcome(false, 409))).toBe(true);
    const truthy = { mode: 'failures', isFailure: () => 1 as unknown as boolean } as const;
    expect(keepsCharge(truthy, outcome(false))).toBe(false);
  });

  it('refunds the checks of limits whose outcome did not count, and nothing when nothing was charged', () => {
    const checks = [
      { key: 'a', limit: { algorithm: 'token-bucket', rate: 1, burst: 1 }, cost: 1 },
      { key: 'b', limit: { algorithm: 'token-bucket', rate: 1, burst: 1 }, cost: 2 },
      { key: 'c', limit: { algorithm: 'token-bucket', rate: 1, burst: 1 }, cost: 1 },
    ] as const;
    const limits = [
      { name: 'plain', charge: undefined },
      { name: 'login', charge: failures },
      { name: 'exports', charge: successes },
    ];
    const noop = () => undefined;
    expect(checksToRefund(limits, checks, outcome(false), noop)).toEqual([checks[1]]);
    expect(checksToRefund(limits, checks, outcome(true), noop)).toEqual([checks[2]]);
    expect(checksToRefund(limits, undefined, outcome(false), noop)).toBeUndefined();
    expect(
      checksToRefund([{ name: 'plain', charge: undefined }], checks, outcome(false), noop),
    ).toBeUndefined();
  });

  it('a predicate that throws leaves its check charged and is reported', () => {
    const reported: string[] = [];
    const throwing = {
      mode: 'failures',
      isFailure: () => {
        throw new Error('bug');
      },
    } as const;
    const checks = [
      { key: 'a', limit: { algorithm: 'token-bucket', rate: 1, burst: 1 }, cost: 1 },
    ] as const;
    expect(
      checksToRefund([{ name: 'login', charge: throwing }], checks, outcome(false), (name) =>
        reported.push(name),
      ),
    ).toBeUndefined();
    expect(reported).toEqual(['login']);
  });
});
