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

/**
 * The `timeoutMs` of a store (or of a health check's PING) in a test whose
 * calls are all meant to be answered, on any clock: what such a test checks
 * is not the deadline, and a loaded CI machine can stall a call for seconds,
 * so the deadline is far past that, while a call that never answers still
 * fails the test, by this deadline, before jest's 30 s. A test that kills
 * Redis can use it too: a killed server fails each call at once (no offline
 * queue), so the deadline only bounds the calls made while Redis is up. A
 * test of the deadline itself sets its own (100 ms, 250 ms, 1 s).
 */
export const ANSWERED_DEADLINE_MS = 20_000;
