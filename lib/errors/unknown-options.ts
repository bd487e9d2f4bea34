import { optionError } from './option-error.js';

/**
 * Every option name of `T`, as a list. The record must name each key of `T`
 * and nothing else (the compiler checks both), so an option added to an
 * interface cannot be forgotten here and then refused at start-up.
 *
 * @internal
 */
export function optionNames<T>(names: {
  readonly [K in keyof Required<T>]: true;
}): readonly string[] {
  return Object.freeze(Object.keys(names));
}

/**
 * Refuse option names that are not in `known`, naming the first one, where it
 * was found and the closest known name when one is plausible:
 *
 * ```
 * RateLimit: OrdersController.search, limit "default": brust is not an option (did you mean burst?)
 * RateLimitModule: trustproxy is not an option (did you mean trustProxy?)
 * ```
 *
 * A misspelt option would otherwise be ignored and its default used in
 * silence. Runs once, at start-up or construction, never per request.
 * `options` that is not an object is left to the caller's own check.
 * `prefix` names a nested object in the message (`'adaptive.'`).
 *
 * @throws TypeError in the {@link optionError} format.
 * @internal
 */
export function rejectUnknownOptions(
  where: string,
  options: unknown,
  known: readonly string[],
  prefix = '',
): void {
  if (options === null || typeof options !== 'object') return;
  for (const name of Object.keys(options)) {
    if (known.includes(name)) continue;
    const closest = closestName(name, known);
    const hint =
      closest === undefined ? `known options: ${known.join(', ')}` : `did you mean ${closest}?`;
    throw optionError(where, `${prefix}${name}`, `is not an option (${hint})`);
  }
}

/**
 * The known name closest to `name`, or `undefined` when none is plausibly
 * what was meant. Case is ignored (`trustproxy` → `trustProxy`); a plausible
 * name is at most one edit away per three characters typed (at least one),
 * so `brust` → `burst` and `default` → `defaults`, but `blockDuration`
 * suggests nothing. Ties go to the first name in `known`.
 *
 * @internal
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const typed = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.floor(typed.length / 3)) + 1;
  for (const candidate of known) {
    const distance = editDistance(typed, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/**
 * Edit distance counting an insertion, a deletion, a substitution or a swap
 * of two adjacent characters as one edit (optimal string alignment): the
 * swap is the most common typo (`brust`, `useFactroy`), and plain
 * Levenshtein would count it as two.
 *
 * @internal
 */
export function editDistance(a: string, b: string): number {
  // rows[i][j]: distance between the first i characters of a and the first j of b.
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i]!;
    const above = rows[i - 1]!;
    for (let j = 1; j <= b.length; j++) {
      const substitution = a[i - 1] === b[j - 1] ? 0 : 1;
      let distance = Math.min(above[j]! + 1, row[j - 1]! + 1, above[j - 1]! + substitution);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        distance = Math.min(distance, rows[i - 2]![j - 2]! + 1);
      }
      row[j] = distance;
    }
  }
  return rows[a.length]![b.length]!;
}
