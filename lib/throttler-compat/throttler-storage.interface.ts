/** What a throttler storage answers for one hit (`@nestjs/throttler` 6). */
export interface ThrottlerStorageRecord {
  /** Hits counted in the window, the denied one included. */
  totalHits: number;
  /** Seconds until the window ends. */
  timeToExpire: number;
  isBlocked: boolean;
  /** Seconds until the block ends (0 when not blocked). */
  timeToBlockExpire: number;
}

/**
 * `@nestjs/throttler`'s storage contract. A storage given in `storage` is
 * used as it is (the guard calls its `increment`); the default,
 * `ThrottlerStorageService`, runs on this library's stores.
 */
export interface ThrottlerStorage {
  increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord>;
}

/** The injection token of the storage (`getStorageToken()`). */
export const ThrottlerStorage = Symbol('ThrottlerStorage');
