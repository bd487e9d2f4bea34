import { randomBytes } from 'node:crypto';

/**
 * A store's id in the fleet counts of its hot keys (`scripts/fleet.lua.ts`):
 * 72 random bits, base64url (12 characters), new for each store, so that
 * two processes (or two stores in one) never count as one, and a restarted
 * process counts as a new instance (its old id ages out of the count within
 * one window).
 *
 * @internal
 */
export function newInstanceId(): string {
  return randomBytes(9).toString('base64url');
}
