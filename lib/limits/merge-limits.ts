import type { RateLimitOptions } from '../interfaces/rate-limit-options.interface.js';
import { DEFAULT_LIMIT_NAME } from '../rate-limit.constants.js';

/** Where a route's limits come from, least specific first. */
export interface DeclaredLimits {
  /** The module's `limits`: every route. */
  readonly moduleLimits: readonly RateLimitOptions[];
  /** The module's `defaults`: routes without any `@RateLimit()`. */
  readonly defaults: RateLimitOptions | undefined;
  readonly classLimits: readonly RateLimitOptions[];
  readonly methodLimits: readonly RateLimitOptions[];
  /** `true` skips everything; a list skips those names. */
  readonly skip: true | readonly string[];
}

/**
 * The limits that apply to one route, by the brief's rules: a more specific
 * limit replaces a less specific one of the same name (module → class →
 * method); `defaults` only where neither class nor method declares a limit;
 * skipped names removed. Throws on duplicate names within one level, naming `where`.
 */
export function mergeLimits(declared: DeclaredLimits, where: string): RateLimitOptions[] {
  if (declared.skip === true) return [];
  const byName = new Map<string, RateLimitOptions>();
  const level = (limits: readonly RateLimitOptions[], label: string): void => {
    const seen = new Set<string>();
    for (const limit of limits) {
      const name = limit?.name ?? DEFAULT_LIMIT_NAME;
      if (seen.has(name)) {
        throw new TypeError(`RateLimit: ${where}: duplicate limit name "${name}" in ${label}; give each limit its own name`);
      }
      seen.add(name);
      byName.delete(name); // re-insert so the order follows specificity
      byName.set(name, limit);
    }
  };
  level(declared.moduleLimits, 'the module limits');
  if (declared.classLimits.length === 0 && declared.methodLimits.length === 0 && declared.defaults) {
    level([declared.defaults], 'the module defaults');
  }
  level(declared.classLimits, 'the class @RateLimit()');
  level(declared.methodLimits, 'the method @RateLimit()');
  for (const name of declared.skip) byName.delete(name);
  return [...byName.values()];
}
