import { createHash } from 'node:crypto';

/** Identities longer than this are hashed. */
const MAX_RAW_LENGTH = 128;
/** Printable ASCII without space; anything else (NUL, unicode, whitespace) is hashed. */
const SAFE_IDENTITY = /^[\x21-\x7e]*$/;

/**
 * Make a caller identity safe to embed in a store key: short printable ASCII
 * passes as is, anything else (a 1 MB header, NUL bytes, unicode) becomes a
 * fixed-length digest. Raw identities are marked `=` and digests `#`, so a
 * caller cannot choose a raw identity equal to another caller's digest.
 */
export function boundedIdentity(identity: string): string {
  if (identity.length <= MAX_RAW_LENGTH && SAFE_IDENTITY.test(identity)) return `=${identity}`;
  return `#${createHash('sha256').update(identity).digest('base64url')}`;
}
