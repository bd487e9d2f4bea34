/**
 * A flood of keys: an attacker who can mint identities (random API keys,
 * usernames on a per-account limit) sends each once. Memory stays within
 * `maxKeys`, and the flood cannot buy a victim a fresh bucket by pushing its
 * (denied, most loaded) bucket out: eviction takes buckets that are full
 * again, never a denied one first. The store is driven as the guard drives
 * it, one check per request, with the module's clock.
 */
import { ManualClock, MemoryStore } from 'nestjs-holdup';
import type { RateLimitCheck, TokenBucketLimit } from 'nestjs-holdup/store';

/** 5 per hour, a burst of 5: a login limit. */
const LOGIN: TokenBucketLimit = { algorithm: 'token-bucket', rate: 5 / 3600, burst: 5 };
const MAX_KEYS = 2_000;
const FLOOD = 50_000;

const check = (identity: string): RateLimitCheck => ({
  key: `tb|login|*|k=${identity}`,
  limit: LOGIN,
  cost: 1,
});

describe('a flood of minted keys against MemoryStore', () => {
  it(`${FLOOD} keys through maxKeys ${MAX_KEYS}: the size stays bounded and the victim stays denied`, () => {
    const clock = new ManualClock(1_700_000_000_000);
    const store = new MemoryStore({ maxKeys: MAX_KEYS });
    const victim = check('victim');
    let victimAdmitted = 0;
    const tryVictim = () => {
      if (store.consume({ checks: [victim], now: clock.now() }).allowed) victimAdmitted++;
    };
    for (let i = 0; i < 10; i++) tryVictim(); // 5 admitted, then denied
    expect(victimAdmitted).toBe(5);

    for (let i = 0; i < FLOOD; i++) {
      clock.advance(1); // 50 s in all: far less than one token of the victim's limit (720 s)
      store.consume({ checks: [check(`minted-${i}`)], now: clock.now() });
      if (i % 1_000 === 0) tryVictim();
      expect(store.size).toBeLessThanOrEqual(MAX_KEYS);
    }
    expect(store.evictions).toBeGreaterThan(0);
    // No token refilled in 50 s: every try of the victim during the flood was denied.
    expect(victimAdmitted).toBe(5);
  });
});
