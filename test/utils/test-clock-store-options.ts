/**
 * The options of a `RedisStore` / `TwoTierStore` driven by the test's clock:
 * spread them into the store's options (and override a value where a test
 * needs its own).
 *
 * - `time: 'client'`: each request's `now` (the test's `ManualClock`) decides.
 * - `expiryPaddingMs`: in client time the keys still expire in Redis' real
 *   time (`PX` = TAT minus now, often 100-500 ms) while the `ManualClock`
 *   stands still, and a loaded CI machine can stall that long between two
 *   calls, so a key read back later would be gone. A minute of padding keeps
 *   the keys for the length of a test. A test that checks expiry must not
 *   use it.
 * - `timeoutMs`: on a loaded CI machine the default 100 ms turns a slow
 *   answer into a store failure, which is not what these tests test.
 */
export const ON_TEST_CLOCK = {
  time: 'client',
  expiryPaddingMs: 60_000,
  timeoutMs: 5_000,
} as const;
