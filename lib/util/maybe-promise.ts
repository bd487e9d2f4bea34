/** A value, or a promise of it: stores that can answer synchronously should. */
export type MaybePromise<T> = T | Promise<T>;

/** True for a promise (or any thenable). */
export function isPromiseLike<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/**
 * The one "value or promise" helper of the request path: runs `onValue` on
 * `value` now when it is a value, or when it resolves; `onError` when it
 * rejects. A synchronous answer stays synchronous (no promise is added where
 * the store gave a value), so a step that may become asynchronous later never
 * adds a second code path.
 *
 * `state` is handed to both callbacks so that they can be functions created
 * once, not closures allocated per request.
 */
export function settle<T, S, R>(
  value: MaybePromise<T>,
  state: S,
  onValue: (state: S, value: T) => R,
  onError: (state: S, error: unknown) => R,
): MaybePromise<R> {
  if (!isPromiseLike(value)) return onValue(state, value);
  return value.then(
    (resolved) => onValue(state, resolved),
    (error: unknown) => onError(state, error),
  ) as Promise<R>;
}
