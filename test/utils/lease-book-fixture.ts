import type { GiveBackQueue } from '../../adapters/two-tier/give-back-queue.js';
import { DenyCache } from '../../adapters/two-tier/deny-cache.js';
import { KeyTable } from '../../adapters/two-tier/key-table.js';
import { LeaseBook } from '../../adapters/two-tier/lease-book.js';
import { ManualClock } from '../../lib/clock.js';

/** What the table hands to the give-back queue: [key, rate, burst, tokens]. */
export type GivenBack = [string, number, number, number];

/** A lease book on a real key table and deny cache; give-backs recorded, not sent. */
export function leaseBook({
  leaseTtlMs = 1_000,
  maxLeaseShare = 0.25,
  draws = [] as number[],
  instances = 1,
}: { leaseTtlMs?: number; maxLeaseShare?: number; draws?: number[]; instances?: number } = {}) {
  const givenBack: GivenBack[] = [];
  const flushes = { count: 0 };
  const giveBacks = {
    add: (...args: GivenBack) => givenBack.push(args),
    flush: () => flushes.count++,
  } as unknown as GiveBackQueue;
  const clock = new ManualClock(0);
  const keys = new KeyTable(1_000, leaseTtlMs, clock, giveBacks);
  const denials = new DenyCache();
  // Draws for the fleet holds, in order (0.5, the mean, once they run out).
  const random = () => draws.shift() ?? 0.5;
  const leases = new LeaseBook(
    leaseTtlMs,
    maxLeaseShare,
    clock,
    keys,
    giveBacks,
    denials,
    random,
    instances > 1,
    instances,
    true,
  );
  return { leases, keys, denials, clock, givenBack, flushes };
}

/**
 * In a `describe` block: {@link leaseBook}'s factory, every book it made
 * closed after each test (its give-back timer stopped).
 */
export function leaseBooks(): typeof leaseBook {
  const books: LeaseBook[] = [];
  afterEach(() => {
    for (const leases of books.splice(0)) leases.close();
  });
  return (options) => {
    const made = leaseBook(options);
    books.push(made.leases);
    return made;
  };
}
