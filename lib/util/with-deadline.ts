import { realTimer, type RateLimitClock } from '../clock.js';

/**
 * `promise`, or a rejection with `expired()` once `ms` of `clock`'s time have
 * passed without it settling: a promise that never settles must not hold a
 * request forever. The timer is the clock's (real time `unref()`'d, or a
 * `ManualClock`'s), cancelled as soon as `promise` settles.
 */
export function withDeadline<T>(
  promise: Promise<T>,
  clock: RateLimitClock,
  ms: number,
  expired: () => Error,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const fire = () => reject(expired());
    const timer = clock.setTimer ? clock.setTimer(ms, fire) : realTimer(ms, fire);
    promise.then(
      (value) => {
        timer.cancel();
        resolve(value);
      },
      (error: unknown) => {
        timer.cancel();
        reject(error);
      },
    );
  });
}
