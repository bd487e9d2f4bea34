/**
 * The few test-framework functions the store contract suites call, typed
 * structurally so that the package builds (and ships) without any test
 * framework's types. Jest's and Vitest's globals fit as they are.
 */

/** The matchers the suites use. */
export interface StoreContractMatchers {
  toBe(expected: unknown): unknown;
  toEqual(expected: unknown): unknown;
  toMatchObject(expected: object): unknown;
  toBeDefined(): unknown;
  toBeUndefined(): unknown;
  toBeGreaterThan(expected: number): unknown;
  readonly rejects: { toThrow(expected?: RegExp): PromiseLike<unknown> };
}

/** `expect`, and the asymmetric matcher the suites use for millisecond fields. */
export interface StoreContractExpect {
  (actual: unknown): StoreContractMatchers;
  /** An asymmetric matcher: a number within `10 ** -digits / 2` of `expected`. */
  closeTo(expected: number, digits?: number): unknown;
}

/**
 * What {@link describeStoreContract} and {@link describeWindowStoreContract}
 * register their tests with. By default the globals of the running test
 * framework (Jest, or Vitest with `globals: true`); pass it when they are not
 * globals (`import { describe, it, beforeEach, afterEach, expect } from 'vitest'`).
 */
export interface StoreContractFramework {
  describe(name: string, body: () => void): unknown;
  it(name: string, test: () => Promise<void>): unknown;
  beforeEach(hook: () => Promise<void>): unknown;
  afterEach(hook: () => Promise<void>): unknown;
  readonly expect: StoreContractExpect;
}

const NAMES = ['describe', 'it', 'beforeEach', 'afterEach', 'expect'] as const;

/** The framework given, or the globals; throws, naming what is missing, when neither has it. @internal */
export function contractFramework(
  given: StoreContractFramework | undefined,
  suite: string,
): StoreContractFramework {
  const framework = given ?? (globalThis as unknown as Partial<StoreContractFramework>);
  const missing = NAMES.filter((name) => typeof framework[name] !== 'function');
  if (missing.length > 0) {
    throw new TypeError(
      `${suite} registers tests with describe, it, beforeEach, afterEach and expect: ${missing.join(', ')} ` +
        `${given ? 'missing from the framework given' : 'not found as globals'}; run it under a test framework that defines them, or pass { framework: { describe, it, beforeEach, afterEach, expect } }`,
    );
  }
  return framework as StoreContractFramework;
}
