/**
 * The one format of configuration errors, thrown at start-up:
 *
 * ```
 * <where>: <option> <problem>
 * RateLimitModule: headers must be 'draft', 'legacy', 'both' or false, got "drafts"
 * RateLimit: OrdersController.search, limit "search": burst must be a finite number >= 1, got 0
 * RedisStore: timeoutMs must be a positive number of milliseconds, got -1
 * ```
 *
 * `where` names the owner (module, store, or the handler and limit), so the
 * message alone says which line of the application to fix.
 *
 * @internal
 */
export function optionError(where: string, option: string, problem: string): TypeError {
  return new TypeError(`${where}: ${option} ${problem}`);
}

/**
 * A value as error messages show it after "got": strings quoted (so `'true'`
 * from an environment variable is not mistaken for `true`), everything else
 * as `String()` shows it.
 *
 * @internal
 */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return 'a function';
  return String(value);
}
