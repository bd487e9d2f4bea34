import { createHash } from 'node:crypto';
import { describeValue, optionError } from '../../lib/errors/option-error.js';

/**
 * Redis key building for {@link RedisStore}.
 *
 * The module hands the store keys that are already namespaced (limit name,
 * route, caller), but the caller part comes from the client: an IP, a header
 * value, whatever a key function returns. Redis gives braces a meaning (the
 * first `{...}` of a key decides its Cluster slot), and a key's bytes are all
 * Redis sees, so the raw string cannot be used as is. The Redis key is
 *
 * ```
 * <keyPrefix>{<encoded bucket key>}
 * ```
 *
 * - The whole encoded bucket key is the hash tag: one bucket is one key in one
 *   slot, and different buckets spread over the Cluster.
 * - The encoding keeps printable ASCII except `%`, `{`, `}` and `#`, and writes
 *   everything else as `%XX` (code unit up to 0xFF) or `%uXXXX` (other UTF-16
 *   code units, lone surrogates included). It is injective, never contains a
 *   brace (so a caller cannot move its key to another slot or close the tag),
 *   and yields pure ASCII, so two different JavaScript strings can never become
 *   the same bytes (UTF-8 encoding would map every lone surrogate to U+FFFD).
 * - An encoded key longer than {@link MAX_ENCODED_KEY_LENGTH} is replaced by
 *   `#` + the SHA-256 of the encoded key: the length is bounded, and since `#`
 *   is always escaped, a hashed key cannot collide with a short one.
 * - `keyPrefix` may not contain braces, so the prefix ends at the first `{`:
 *   two different (prefix, key) pairs never give the same Redis key.
 */

/** Encoded bucket keys longer than this are hashed (the Redis key is then `prefix{#<64 hex>}`). */
export const MAX_ENCODED_KEY_LENGTH = 200;

/** Longest accepted `keyPrefix`. */
export const MAX_KEY_PREFIX_LENGTH = 100;

/** Keys made only of these characters are used as they are (the common case: no allocation). */
const PLAIN = /^[\x20-\x22\x24\x26-\x7a\x7c\x7e]*$/;

/** `<keyPrefix>{<encoded bucket key>}`: see the file comment for why. */
export function redisKey(prefix: string, bucketKey: string): string {
  let encoded = PLAIN.test(bucketKey) ? bucketKey : encodeKey(bucketKey);
  if (encoded.length > MAX_ENCODED_KEY_LENGTH) {
    encoded = '#' + createHash('sha256').update(encoded).digest('hex');
  }
  return `${prefix}{${encoded}}`;
}

/** Percent-encoding of everything outside the plain set, per UTF-16 code unit. */
export function encodeKey(key: string): string {
  let out = '';
  for (let i = 0; i < key.length; i++) {
    const code = key.charCodeAt(i);
    const plain =
      code >= 0x20 &&
      code <= 0x7e &&
      code !== 0x25 &&
      code !== 0x7b &&
      code !== 0x7d &&
      code !== 0x23;
    if (plain) out += key[i];
    else if (code <= 0xff) out += '%' + code.toString(16).toUpperCase().padStart(2, '0');
    else out += '%u' + code.toString(16).toUpperCase().padStart(4, '0');
  }
  return out;
}

/** Validates a `keyPrefix` option, returning it. */
export function checkKeyPrefix(prefix: unknown): string {
  if (typeof prefix !== 'string') {
    throw optionError('RedisStore', 'keyPrefix', `must be a string, got ${describeValue(prefix)}`);
  }
  if (prefix.includes('{') || prefix.includes('}')) {
    throw optionError(
      'RedisStore',
      'keyPrefix',
      `must not contain "{" or "}" (the store sets the Cluster hash tag itself), got ${JSON.stringify(prefix)}`,
    );
  }
  if (prefix.length > MAX_KEY_PREFIX_LENGTH) {
    throw optionError(
      'RedisStore',
      'keyPrefix',
      `must be at most ${MAX_KEY_PREFIX_LENGTH} characters, got ${prefix.length}`,
    );
  }
  return prefix;
}

/** CRC16/XMODEM lookup table, as Redis Cluster uses for key slots. */
const CRC16_TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

/**
 * The Redis Cluster slot (0-16383) of a key: CRC16 of the hash tag (the text
 * between the first `{` and the next `}`, when not empty), else of the whole
 * key, over its UTF-8 bytes.
 */
export function keySlot(key: string): number {
  let hashed = key;
  const open = key.indexOf('{');
  if (open !== -1) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) hashed = key.slice(open + 1, close);
  }
  let crc = 0;
  for (const byte of Buffer.from(hashed, 'utf8')) {
    crc = ((crc << 8) & 0xffff) ^ CRC16_TABLE[((crc >> 8) ^ byte) & 0xff]!;
  }
  return crc % 16384;
}
