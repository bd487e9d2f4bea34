import { RateLimitStoreError } from '../../lib/errors/rate-limit-store.error.js';
import type {
  ConcurrencySlots,
  SlotAcquireRequest,
  SlotAcquireResult,
  SlotReleaseRequest,
} from '../../lib/store/concurrency-slots.interface.js';
import type { GuardedCalls } from './guarded-call.js';
import type { RedisClient } from './redis-client.interface.js';
import { redisKey } from './redis-keys.js';
import { SLOT_SCRIPTS, type SlotScript } from './scripts/slots.lua.js';

/** How long a released id that was not held is remembered when the release names no lease: the default `leaseTimeout`. */
const DEFAULT_RELEASED_MS = 300_000;

/** The set of released ids beside a slot key (`scripts/slots.lua.ts`): the same hash tag, so the same Cluster slot. */
function releasedKey(slotKey: string): string {
  return `${slotKey}:released`;
}

/**
 * `RedisStore`'s concurrency slots (`scripts/slots.lua.ts`): one script call
 * per acquisition or release, under the store's failure rules (timeout,
 * fail-fast when not connected, `RateLimitStoreError`). Leases run on Redis
 * server time whatever the store's `clientTime` says: the instances sharing
 * a key must agree on when a dead one's slots expire.
 *
 * @internal
 */
export class RedisSlots implements ConcurrencySlots {
  constructor(
    private readonly client: RedisClient,
    private readonly keyPrefix: string,
    private readonly guard: GuardedCalls,
  ) {}

  acquire(request: SlotAcquireRequest): Promise<SlotAcquireResult> {
    const args = [String(request.limit), String(request.leaseMs), request.id];
    return this.guard.run('acquire slot', async () => {
      const key = redisKey(this.keyPrefix, request.key);
      const reply = await this.run(SLOT_SCRIPTS.acquire, [key, releasedKey(key)], args);
      if (!Array.isArray(reply) || reply.length !== 2)
        throw new RateLimitStoreError(
          `RedisStore: acquire slot: unexpected reply ${JSON.stringify(reply)}`,
        );
      return { allowed: Number(reply[0]) === 1, inFlight: Number(reply[1]) };
    });
  }

  release(request: SlotReleaseRequest): Promise<void> {
    const keep = String(Math.max(1, Math.ceil(request.leaseMs ?? DEFAULT_RELEASED_MS)));
    return this.guard.run('release slot', async () => {
      const key = redisKey(this.keyPrefix, request.key);
      await this.run(SLOT_SCRIPTS.release, [key, releasedKey(key)], [request.id, keep]);
    });
  }

  inFlight(key: string): Promise<number> {
    return this.guard.run('count slots', async () =>
      Number(await this.run(SLOT_SCRIPTS.count, [redisKey(this.keyPrefix, key)], [])),
    );
  }

  private async run(
    script: SlotScript,
    keys: readonly string[],
    args: readonly string[],
  ): Promise<unknown> {
    try {
      return await this.client.evalsha(script.sha, keys.length, ...keys, ...args);
    } catch (error) {
      // After a restart, failover or SCRIPT FLUSH: the source once, which caches it again.
      if (!(error instanceof Error && error.message.includes('NOSCRIPT'))) throw error;
      return this.client.eval(script.source, keys.length, ...keys, ...args);
    }
  }
}
