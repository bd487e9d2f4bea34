import type { RateLimitOptions } from '../interfaces/rate-limit-options.interface.js';
import { DEFAULT_LIMIT_NAME } from '../rate-limit.constants.js';

/** What `@SkipRateLimit()` says at one level: `true` skips everything, a list those names. */
export type SkipDeclaration = true | readonly string[];

/** Where a route's limits come from, least specific first. */
export interface DeclaredLimits {
  /** The module's `limits`: every route. */
  readonly moduleLimits: readonly RateLimitOptions[];
  /** The module's `defaults`: routes without any `@RateLimit()`. */
  readonly defaults: RateLimitOptions | undefined;
  readonly classLimits: readonly RateLimitOptions[];
  readonly methodLimits: readonly RateLimitOptions[];
  /** `@SkipRateLimit()` on the class: applies to the module's limits and defaults. */
  readonly classSkip: SkipDeclaration | undefined;
  /** `@SkipRateLimit()` on the method: applies to everything declared at the module or class level. */
  readonly methodSkip: SkipDeclaration | undefined;
}

/**
 * The limits that apply to one route. The nearest declaration wins:
 *
 * 1. the module's `limits`, and its `defaults` where neither the class nor
 *    the method declares any limit;
 * 2. the class: `@SkipRateLimit()` removes what level 1 gave (all, or the
 *    names listed), then its `@RateLimit()` limits are added, replacing
 *    those of the same name;
 * 3. the method, the same way over what levels 1 and 2 gave.
 *
 * So a method's explicit `@RateLimit()` applies under a class
 * `@SkipRateLimit()`, and a method's `@SkipRateLimit()` removes class and
 * module limits. Refused at start-up, naming `where`: duplicate names within
 * one level, a name both skipped and declared at one level (which one was
 * meant?), and a skipped name declared nowhere for this route (a typo would
 * otherwise skip nothing, silently).
 */
export function mergeLimits(declared: DeclaredLimits, where: string): RateLimitOptions[] {
  const fail = (problem: string): never => {
    throw new TypeError(`RateLimit: ${where}: ${problem}`);
  };
  const known = declaredNames(declared);
  const byName = new Map<string, RateLimitOptions>();
  const add = (
    limits: readonly RateLimitOptions[],
    label: string,
    skipped: SkipDeclaration | undefined,
  ): void => {
    const seen = new Set<string>();
    for (const limit of limits) {
      const name = nameOf(limit);
      if (seen.has(name))
        fail(`duplicate limit name "${name}" in ${label}; give each limit its own name`);
      if (Array.isArray(skipped) && skipped.includes(name)) {
        fail(
          `limit "${name}" is both declared by ${label} and skipped by @SkipRateLimit() at the same level; keep one of the two`,
        );
      }
      seen.add(name);
      byName.delete(name); // re-insert so the order follows specificity
      byName.set(name, limit);
    }
  };
  const skip = (skipped: SkipDeclaration | undefined, label: string): void => {
    if (skipped === undefined) return;
    if (skipped === true) return byName.clear();
    for (const name of skipped) {
      if (!known.has(name)) {
        fail(
          `@SkipRateLimit('${name}') on the ${label} names no limit declared for this route (declared: ${[...known].join(', ') || 'none'})`,
        );
      }
      byName.delete(name);
    }
  };

  add(declared.moduleLimits, 'the module limits', undefined);
  if (
    declared.classLimits.length === 0 &&
    declared.methodLimits.length === 0 &&
    declared.defaults
  ) {
    add([declared.defaults], 'the module defaults', undefined);
  }
  skip(declared.classSkip, 'class');
  add(declared.classLimits, 'the class @RateLimit()', declared.classSkip);
  skip(declared.methodSkip, 'method');
  add(declared.methodLimits, 'the method @RateLimit()', declared.methodSkip);
  return [...byName.values()];
}

function nameOf(limit: RateLimitOptions): string {
  return limit?.name ?? DEFAULT_LIMIT_NAME;
}

function declaredNames(declared: DeclaredLimits): Set<string> {
  const all = [...declared.moduleLimits, ...declared.classLimits, ...declared.methodLimits];
  if (declared.defaults) all.push(declared.defaults);
  return new Set(all.map(nameOf));
}
