/**
 * The one format of configuration errors, thrown at start-up:
 *
 * ```
 * <where>: <option> <problem>
 * RateLimitModule: headers must be one of 'draft', 'draft-7', 'draft-6', 'legacy', 'both', false, got "drafts" (did you mean 'draft'?)
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
 * A value as error messages show it after "got", so that a reader can tell
 * what was received, type included: `'true'` from an environment variable is
 * not `true`, and `{}` is not the string `'[object Object]'`.
 *
 * ```
 * 5, NaN, undefined, null        as they are
 * "true"                         a string, quoted
 * a boolean (true)
 * a bigint (5n), a symbol (Symbol(x))
 * a function, an array, an object, an instance of Map
 * ```
 *
 * @internal
 */
export function describeValue(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
    case 'undefined':
      return String(value);
    case 'boolean':
      return `a boolean (${value})`;
    case 'bigint':
      return `a bigint (${value}n)`;
    case 'symbol':
      return `a symbol (${String(value)})`;
    case 'function':
      return 'a function';
  }
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  // A class instance says which class: `rate: new Number(5)` is an instance of Number, not 5.
  const constructorName = (
    Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null
  )?.constructor?.name;
  return typeof constructorName === 'string' &&
    constructorName !== '' &&
    constructorName !== 'Object'
    ? `an instance of ${constructorName}`
    : 'an object';
}
