// One decision micro-benchmark case, in a process of its own (so one case's
// JIT feedback and heap never colour another's):
//   node bench/micro/decision.mjs <case> <iterations>
// Prints one JSON line: { case, iterations, nsPerOp, ... }.
//
// Every case calls the library the way its Nest guard does per request:
// ours builds a fresh request object with a checks array and reads
// Date.now(); the others read Date.now() internally and return promises,
// which the caller awaits one at a time (as a guard does).
// The root entry point (MemoryStore) loads Nest: ~0.5 s per process, so only
// the cases that use it import it (`newMemoryStore`); the floor and the other
// libraries' cases run without it.
import { gcraConsume } from 'nestjs-holdup/algorithms';
import { shuffledOrder } from '../lib/shuffle.mjs';

const KEYS = 100_000;
// Callers as the guard sees them: a client address (the request's own
// string), and the limit's namespace; the guard gives the store both parts
// and the whole key (`namespace + identity`, built per request).
const NAMESPACE = 'tb|default|HelloController.hello|';
const identities = Array.from(
  { length: KEYS },
  (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
);
const keys = identities.map((identity) => NAMESPACE + identity);
const HOT = identities[0];
/** One check as the guard builds it (`bucketCheck`). */
const checkOf = (identity, limit) => ({
  key: NAMESPACE + identity,
  namespace: NAMESPACE,
  identity,
  limit,
  cost: 1,
});

// Limits that never deny during a run and keep every key live (no expiry in
// the middle of the run turning updates into inserts):
// ours: 1 token/s refill, a burst of 1e9 (a key's TAT moves 1 s per hit);
// @nestjs/throttler: 1e9 hits per 60 s; rate-limiter-flexible: 1e9 points per 60 s.
const OUR_LIMIT = { algorithm: 'token-bucket', rate: 1, burst: 1e9 };
const TTL_MS = 60_000;

async function newMemoryStore() {
  const { MemoryStore } = await import('nestjs-holdup');
  return new MemoryStore();
}
const NEVER = 1e9;

function timeSync(iterations, body) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) body(i);
  return Number(process.hrtime.bigint() - start) / iterations;
}

async function timeAsync(iterations, body) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) await body(i);
  return Number(process.hrtime.bigint() - start) / iterations;
}

let sink = 0;

const CASES = {
  /** The floor: the clock read every decision of every library pays (slow on some VMs). */
  'date-now': async (n) => {
    const body = () => {
      sink += Date.now() & 1;
    };
    timeSync(Math.min(n, 100_000), body);
    return { nsPerOp: timeSync(n, body) };
  },
  /** MemoryStore.consume, one check, one hot key. */
  'holdup-hot': async (n) => {
    const store = await newMemoryStore();
    const body = () => {
      const result = store.consume({ checks: [checkOf(HOT, OUR_LIMIT)], now: Date.now() });
      sink += result.allowed ? 1 : 0;
    };
    timeSync(Math.min(n, 100_000), body);
    return { nsPerOp: timeSync(n, body), size: store.size };
  },
  /** MemoryStore.consume, one check, 100k distinct keys round-robin. */
  'holdup-100k': async (n) => {
    const store = await newMemoryStore();
    const body = (i) => {
      const result = store.consume({
        checks: [checkOf(identities[i % KEYS], OUR_LIMIT)],
        now: Date.now(),
      });
      sink += result.allowed ? 1 : 0;
    };
    timeSync(2 * KEYS, body); // every key exists before timing
    return { nsPerOp: timeSync(n, body), size: store.size };
  },
  /** The algorithm alone: gcraConsume on a TAT carried in a local. */
  'gcra-raw': async (n) => {
    let tat;
    const body = () => {
      const outcome = gcraConsume(tat, Date.now(), OUR_LIMIT, 1);
      if (outcome.decision.allowed) tat = outcome.tat;
      sink += outcome.decision.remaining;
    };
    timeSync(Math.min(n, 100_000), body);
    return { nsPerOp: timeSync(n, body) };
  },
  /** @nestjs/throttler ThrottlerStorageService.increment (async), 100k keys round-robin: short logs (~10-20 hits per key). */
  'throttler-100k': async (n) => {
    const { ThrottlerStorageService } = await import('@nestjs/throttler');
    const storage = new ThrottlerStorageService();
    const body = async (i) => {
      const record = await storage.increment(keys[i % KEYS], TTL_MS, NEVER, TTL_MS, 'default');
      sink += record.totalHits;
    };
    await timeAsync(KEYS, body);
    const nsPerOp = await timeAsync(n, body);
    storage.onApplicationShutdown();
    return { nsPerOp };
  },
  /**
   * @nestjs/throttler, one hot key: a sliding log, every call filters all the
   * hits of the last ttl, so the cost grows with the log. Measured in chunks
   * of 1000 calls; reported at a log of ~1k and ~10k entries.
   */
  'throttler-hot': async (n) => {
    const { ThrottlerStorageService } = await import('@nestjs/throttler');
    const storage = new ThrottlerStorageService();
    const body = async () => {
      const record = await storage.increment(HOT, TTL_MS, NEVER, TTL_MS, 'default');
      sink += record.totalHits;
    };
    const chunk = 1_000;
    const chunks = [];
    for (let done = 0; done < n; done += chunk)
      chunks.push({ logEntries: done, nsPerOp: await timeAsync(chunk, body) });
    storage.onApplicationShutdown();
    const at = (entries) => chunks.find((c) => c.logEntries >= entries)?.nsPerOp;
    return { nsPerOp: at(1_000), nsPerOpAtLog10k: at(10_000), chunks: chunks.length };
  },
  /** rate-limiter-flexible RateLimiterMemory.consume (async; fixed window + one timer per key), hot key. */
  'rlf-hot': async (n) => {
    const { RateLimiterMemory } = await import('rate-limiter-flexible');
    const limiter = new RateLimiterMemory({ points: NEVER, duration: TTL_MS / 1000 });
    const body = async () => {
      const res = await limiter.consume(HOT);
      sink += res.remainingPoints;
    };
    await timeAsync(Math.min(n, 100_000), body);
    return { nsPerOp: await timeAsync(n, body) };
  },
  /** rate-limiter-flexible RateLimiterMemory.consume, 100k keys round-robin. */
  'rlf-100k': async (n) => {
    const { RateLimiterMemory } = await import('rate-limiter-flexible');
    const limiter = new RateLimiterMemory({ points: NEVER, duration: TTL_MS / 1000 });
    const body = async (i) => {
      const res = await limiter.consume(identities[i % KEYS]);
      sink += res.remainingPoints;
    };
    await timeAsync(KEYS, body);
    return { nsPerOp: await timeAsync(n, body) };
  },
};

// The target matrix (issue 14): the floor, ours and rate-limiter-flexible, on
// 1 key and 10k keys round-robin, every call allowed or every call denied,
// each called the way a guard calls it (one check object, a namespaced key,
// Date.now(); rate-limiter-flexible awaited, its denial a rejection).
const MATRIX_KEYS = {
  1: [HOT],
  '10k': identities.slice(0, 10_000),
  '10k-random': identities.slice(0, 10_000),
  '100k-random': identities,
};

/**
 * Length of a random-order run: shuffled passes over the pool
 * (bench/lib/shuffle.mjs), walked cyclically. 256k: 2.6 shuffled passes over
 * 100k callers, 26 over 10k, each pass in a new order (1M, as before, cost
 * every such process ~1 s of set-up for the same medians).
 */
const ORDER_LENGTH = 1 << 18;
const ALLOWED = { rate: 1, burst: 1e9 }; // never denies within a run, and every key stays held (no sweep turning updates into inserts)
const DENIED = { rate: 1e-3, burst: 1 }; // one token per 1000 s: after the first call per key, every call denied

/**
 * The floor: a dozen-line lazy-refill token bucket in a Map, what a user
 * would write by hand (tokens and last refill per key).
 */
function handWrittenBucket({ rate, burst }) {
  const buckets = new Map();
  return (key, now) => {
    let bucket = buckets.get(key);
    if (bucket === undefined) buckets.set(key, (bucket = { tokens: burst, last: now }));
    else {
      bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.last) * rate) / 1000);
      bucket.last = now;
    }
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  };
}

function matrixCase(contender, keysName, outcome) {
  const identitiesOf = MATRIX_KEYS[keysName];
  const shape = outcome === 'allowed' ? ALLOWED : DENIED;
  const expected = outcome === 'allowed';
  const warm = Math.max(100_000, 2 * identitiesOf.length);
  return async (n) => {
    // The pool as the contenders index it: in insertion order (round-robin) or shuffled.
    // Built here, for the one case this process runs: built eagerly for all 24
    // matrix cases (12 shuffles of 1M), it cost every process ~3 s before any timing.
    const pool = keysName.endsWith('-random')
      ? Array.from(shuffledOrder(identitiesOf.length, ORDER_LENGTH), (i) => identitiesOf[i])
      : identitiesOf;
    if (contender === 'floor') {
      const consume = handWrittenBucket(shape);
      const body = (i) => {
        sink += consume(pool[i % pool.length], Date.now()) === expected ? 1 : 0;
      };
      timeSync(warm, body);
      return { nsPerOp: timeSync(n, body) };
    }
    if (contender === 'holdup') {
      const store = await newMemoryStore();
      const limit = { algorithm: 'token-bucket', ...shape };
      const body = (i) => {
        const result = store.consume({
          checks: [checkOf(pool[i % pool.length], limit)],
          now: Date.now(),
        });
        sink += result.allowed === expected ? 1 : 0;
      };
      timeSync(warm, body);
      return { nsPerOp: timeSync(n, body) };
    }
    const { RateLimiterMemory } = await import('rate-limiter-flexible');
    const limiter =
      outcome === 'allowed'
        ? new RateLimiterMemory({ points: NEVER, duration: TTL_MS / 1000 })
        : new RateLimiterMemory({ points: 1, duration: 1000 });
    const body = async (i) => {
      try {
        await limiter.consume(pool[i % pool.length]);
        sink += expected ? 1 : 0;
      } catch {
        sink += expected ? 0 : 1;
      }
    };
    await timeAsync(warm, body);
    return { nsPerOp: await timeAsync(n, body) };
  };
}

for (const contender of ['floor', 'holdup', 'rlf']) {
  for (const keysName of Object.keys(MATRIX_KEYS)) {
    for (const outcome of ['allowed', 'denied'])
      CASES[`${contender}-${keysName}-${outcome}`] = matrixCase(contender, keysName, outcome);
  }
}

const [name, iterations] = process.argv.slice(2);
const run = CASES[name];
if (!run) throw new Error(`unknown case ${name}; one of ${Object.keys(CASES).join(', ')}`);
const result = await run(Number(iterations));
process.stdout.write(
  JSON.stringify({ case: name, iterations: Number(iterations), ...result, sink: sink > 0 }) + '\n',
);
// rate-limiter-flexible leaves (unref'd) timers behind: leave without waiting.
process.exit(0);
