/**
 * The longest horizon a bucket may have, in milliseconds: 10^14 ms, about
 * 3,169 years. The horizon is how far ahead of `now` a bucket's state can
 * reach: `burst x interval` (a cost never exceeds the burst), with
 * `interval = 1000 / rate` ms per token. Every store represents it exactly:
 * in memory a double; on Redis an expiry `now + horizon + padding` that stays
 * an exact integer below 2^53 even at the last valid clock reading
 * (8.64e15 ms, year 275760), written without an exponent. Hence also the
 * smallest rate a limit may have (`MIN_RATE`), where one token takes the whole horizon.
 *
 * @publicApi
 */
export const MAX_HORIZON_MS = 1e14;
