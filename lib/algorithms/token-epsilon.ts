/**
 * Tolerance in token units, shared by the algorithms, the stores and the
 * header formatters (the Lua scripts use the same value).
 *
 * Rates such as 3/s make the emission interval a repeating binary fraction,
 * so "exactly 2 tokens left" can compute as 1.9999999999; without a
 * tolerance the caller would see one token less than the bucket holds.
 */
export const TOKEN_EPSILON = 1e-9;
