/**
 * A store could not answer (Redis down, timed out, script error...).
 *
 * Stores throw or reject with this, wrapping the original error as `cause`;
 * the module resolves it with `failMode` and never lets it escape as an
 * unhandled rejection. Being over the limit is never an error.
 *
 * @publicApi
 */
export class RateLimitStoreError extends Error {
  override readonly name = 'RateLimitStoreError';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * `error` as a {@link RateLimitStoreError}: as is when it already is one,
 * else wrapped (as `cause`) under `${what}: <its message>`.
 *
 * For custom stores: exported by `nestjs-holdup/store`, which may change in a 0.x minor version.
 */
export function toStoreError(error: unknown, what: string): RateLimitStoreError {
  if (error instanceof RateLimitStoreError) return error;
  return new RateLimitStoreError(
    `${what}: ${error instanceof Error ? error.message : String(error)}`,
    { cause: error },
  );
}
