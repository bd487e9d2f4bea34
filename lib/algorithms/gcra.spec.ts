import { gcraScenarios, type GcraScenario } from '../../test/utils/gcra-scenarios.js';
import {
  emissionIntervalMs,
  gcraBlock,
  gcraConsume,
  gcraPeek,
  gcraRefund,
  gcraSettle,
  nextTokenMs,
  type BucketLimit,
  type RateLimitDecision,
} from './gcra.js';
import { seededRandom } from '../adaptive/seeded-random.js';

function pick(decision: RateLimitDecision, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) out[key] = (decision as unknown as Record<string, unknown>)[key];
  return out;
}

function runScenario(scenario: GcraScenario): void {
  const { limit } = scenario;
  const interval = emissionIntervalMs(limit);
  const capacityMs = limit.burst * interval;
  let tat: number | undefined;
  let latest = -Infinity;
  scenario.steps.forEach((step, index) => {
    const outcome = gcraConsume(tat, step.at, limit, step.cost);
    const { decision } = outcome;
    // The step index is part of the compared objects so a failure names the step.
    expect({ step: index, ...pick(decision, Object.keys(step.expect)) }).toEqual({
      step: index,
      ...step.expect,
    });

    // Invariants every step must satisfy, whatever the scenario asserts.
    expect(Number.isInteger(decision.remaining)).toBe(true);
    expect(decision.remaining).toBeGreaterThanOrEqual(0);
    expect(decision.remaining).toBeLessThanOrEqual(limit.burst);
    expect(decision.resetMs).toBeGreaterThanOrEqual(0);
    // While time only moves forward the bucket is never more than empty (up
    // to the rounding slack of the implementation, see the report on resetMs).
    if (step.at >= latest)
      expect(decision.resetMs).toBeLessThanOrEqual(capacityMs + toleranceMs(step.at, interval));
    if (decision.allowed) {
      expect(decision.retryAfterMs).toBe(0);
      expect(decision.reason).toBeUndefined();
    } else {
      expect(decision.retryAfterMs).toBeGreaterThan(0);
      expect(decision.reason).toBe(step.cost > limit.burst ? 'cost-exceeds-burst' : 'limit');
      // A denial leaves the state as it was.
      if (tat !== undefined) expect(outcome.tat).toBe(tat);
    }
    tat = outcome.tat;
    latest = Math.max(latest, step.at);
  });
}

describe('gcra: scenario table', () => {
  it('has unique scenario names (the Lua runner keys on them)', () => {
    const names = gcraScenarios.map((s) => s.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it.each(gcraScenarios.map((s) => [s.name, s] as const))(
    '%s',
    (_name: string, scenario: GcraScenario) => {
      runScenario(scenario);
    },
  );
});

describe('gcra: peek and nextTokenMs', () => {
  const limit: BucketLimit = { rate: 1, burst: 3 };

  it('peek of an absent key is a full bucket', () => {
    expect(gcraPeek(undefined, 123, limit)).toEqual({
      allowed: true,
      remaining: 3,
      retryAfterMs: 0,
      resetMs: 0,
    });
  });

  it('peek reports the bucket without charging it', () => {
    const { tat } = gcraConsume(undefined, 0, limit, 2); // tat 2000
    expect(gcraPeek(tat, 0, limit)).toEqual({
      allowed: true,
      remaining: 1,
      retryAfterMs: 0,
      resetMs: 2000,
    });
    expect(gcraPeek(tat, 0, limit)).toEqual({
      allowed: true,
      remaining: 1,
      retryAfterMs: 0,
      resetMs: 2000,
    });
    expect(gcraPeek(tat, 1500, limit)).toEqual({
      allowed: true,
      remaining: 2,
      retryAfterMs: 0,
      resetMs: 500,
    });
    // The state is still good for exactly one more token at 0.
    expect(gcraConsume(tat, 0, limit, 1).decision.allowed).toBe(true);
    expect(gcraConsume(tat, 0, limit, 2).decision.allowed).toBe(false);
  });

  it('nextTokenMs is the time until one more whole token than remaining, one interval when full', () => {
    expect(nextTokenMs(gcraPeek(undefined, 0, limit), limit)).toBe(1000); // full: 3 left
    const one = gcraConsume(undefined, 0, limit, 2); // 1 left, tat 2000
    expect(nextTokenMs(one.decision, limit)).toBe(1000);
    expect(nextTokenMs(gcraPeek(one.tat, 1500, limit), limit)).toBe(500); // 2.5 tokens: the third in 500 ms
    const empty = gcraConsume(one.tat, 0, limit, 1); // tat 3000, reset 3000
    expect(nextTokenMs(empty.decision, limit)).toBe(1000);
    expect(nextTokenMs(gcraPeek(empty.tat, 250, limit), limit)).toBe(750);
    expect(nextTokenMs(gcraPeek(empty.tat, 1000, limit), limit)).toBe(1000);
    expect(nextTokenMs(gcraPeek(empty.tat, 2999, limit), limit)).toBe(1);
  });

  it('nextTokenMs of a fractional burst counts the fraction: 2.5 tokens full, the third whole one 500 ms after spending', () => {
    const fractional: BucketLimit = { rate: 1, burst: 2.5 };
    expect(nextTokenMs(gcraPeek(undefined, 0, fractional), fractional)).toBe(500);
  });
});

interface RandomLimit extends BucketLimit {
  readonly label: string;
}

const propertyLimits: readonly RandomLimit[] = [
  { label: '1/s burst 1', rate: 1, burst: 1 },
  { label: '3/s burst 3', rate: 3, burst: 3 },
  { label: '7/s burst 10', rate: 7, burst: 10 },
  { label: '10/s burst 20', rate: 10, burst: 20 },
  { label: '0.3/s burst 2', rate: 0.3, burst: 2 },
  { label: '1/h burst 5', rate: 1 / 3600, burst: 5 },
  { label: '100/15min burst 7', rate: 100 / 900, burst: 7 },
  { label: '1000/s burst 50', rate: 1000, burst: 50 },
  { label: '1e6/s burst 1000', rate: 1e6, burst: 1000 },
];

interface Admission {
  readonly at: number;
  readonly cost: number;
}

/**
 * What time itself can resolve, in ms: a few rounding steps of the absolute
 * time (doubles), plus a millionth of a token. Decisions are only required to
 * be right outside this margin.
 */
function toleranceMs(at: number, interval: number): number {
  return 1e-6 * interval + Math.abs(at) * Number.EPSILON * 4;
}

/**
 * Every window [a, b] between two admissions: the cost admitted in it is at
 * most burst + rate * (b - a) / 1000 (a token bucket that starts full).
 * Returns the violations, described well enough to replay them.
 */
function windowBoundViolations(admissions: readonly Admission[], limit: BucketLimit): string[] {
  const interval = emissionIntervalMs(limit);
  const prefix = [0];
  for (const a of admissions) prefix.push(prefix[prefix.length - 1]! + a.cost);
  const out: string[] = [];
  for (let i = 0; i < admissions.length; i++) {
    const start = admissions[i]!.at;
    for (let j = i; j < admissions.length; j++) {
      const end = admissions[j]!.at;
      const admitted = prefix[j + 1]! - prefix[i]!;
      const bound =
        limit.burst + (limit.rate * (end - start)) / 1000 + toleranceMs(end, interval) / interval;
      if (admitted > bound && out.length < 5)
        out.push(`admitted ${admitted} > ${bound} in [${start}, ${end}]`);
    }
  }
  return out;
}

function randomCost(rand: () => number, burst: number): number {
  const r = rand();
  if (r < 0.05) return burst + 1 + Math.floor(rand() * 3); // never admissible
  if (r < 0.15) return Math.max(0.25, Math.round(rand() * burst * 4) / 4); // fractional
  if (r < 0.25) return burst;
  return 1 + Math.floor(rand() * Math.min(burst, 5));
}

/** Forward time step, scaled to the bucket so every limit sees empty, partial and full states. */
function randomDelta(rand: () => number, interval: number, burst: number): number {
  const r = rand();
  if (r < 0.3) return 0;
  if (r < 0.6) return rand() * interval * 0.5;
  if (r < 0.9) return rand() * interval * 2;
  return rand() * interval * burst * 1.5;
}

interface RunOptions {
  readonly seed: number;
  readonly start: number;
  readonly steps: number;
  /** Let the clock jump back (by up to 1.5 bucket capacities) on ~15 % of the steps. */
  readonly backwards: boolean;
}

interface RunResult {
  readonly admissions: Admission[];
  readonly violations: string[];
  readonly limitDenials: number;
  readonly minAt: number;
  readonly maxAt: number;
  readonly backJumps: number;
}

/**
 * Drives one bucket through a random sequence and checks every decision.
 * Checks are plain comparisons collected as messages (one `expect` per run
 * keeps 100k+ decisions fast); each message carries what is needed to replay.
 */
function randomRun(limit: BucketLimit, options: RunOptions): RunResult {
  const rand = seededRandom(options.seed);
  const interval = emissionIntervalMs(limit);
  const capacityMs = limit.burst * interval;
  const admissions: Admission[] = [];
  const violations: string[] = [];
  const fail = (
    what: string,
    at: number,
    cost: number,
    tat: number | undefined,
    d: RateLimitDecision,
  ): void => {
    if (violations.length < 10)
      violations.push(`${what}: tat=${tat} at=${at} cost=${cost} -> ${JSON.stringify(d)}`);
  };
  let tat: number | undefined;
  let now = options.start;
  let minAt = now;
  let maxAt = now;
  let limitDenials = 0;
  let backJumps = 0;

  for (let s = 0; s < options.steps; s++) {
    const back = options.backwards && rand() < 0.15;
    if (back) backJumps++;
    // Forward steps of up to 2 intervals keep the walk moving forward overall.
    now += back
      ? -rand() * capacityMs * 1.5
      : options.backwards
        ? rand() * interval * 2
        : randomDelta(rand, interval, limit.burst);
    const forward = now >= maxAt;
    maxAt = Math.max(maxAt, now);
    minAt = Math.min(minAt, now);
    const cost = randomCost(rand, limit.burst);
    const { tat: nextTat, decision: d } = gcraConsume(tat, now, limit, cost);

    if (!Number.isInteger(d.remaining) || d.remaining < 0 || d.remaining > limit.burst)
      fail('remaining out of [0, burst]', now, cost, tat, d);
    if (!(d.resetMs >= 0)) fail('negative resetMs', now, cost, tat, d);
    if (forward && d.resetMs > capacityMs + toleranceMs(now, interval))
      fail('resetMs above capacity', now, cost, tat, d);

    if (cost > limit.burst) {
      if (d.allowed || d.reason !== 'cost-exceeds-burst' || d.retryAfterMs !== Infinity)
        fail('cost > burst not refused', now, cost, tat, d);
      if (tat !== undefined && nextTat !== tat)
        fail('refusal changed the state', now, cost, tat, d);
    } else if (d.allowed) {
      if (d.retryAfterMs !== 0 || d.reason !== undefined)
        fail('admission with retry/reason', now, cost, tat, d);
      // What a request reports is what the bucket holds right after it.
      // (resetMs up to the rounding slack: an admission may land a hair past
      // C, which peek clamps back to C.)
      const after = gcraPeek(nextTat, now, limit);
      if (
        after.remaining !== d.remaining ||
        Math.abs(after.resetMs - d.resetMs) > toleranceMs(now, interval)
      ) {
        fail('decision differs from peek after it', now, cost, tat, d);
      }
      admissions.push({ at: now, cost });
    } else {
      limitDenials++;
      if (d.reason !== 'limit' || !(d.retryAfterMs > 0) || !Number.isFinite(d.retryAfterMs))
        fail('bad limit denial', now, cost, tat, d);
      if (tat !== undefined && nextTat !== tat) fail('denial changed the state', now, cost, tat, d);
      if (!options.backwards) {
        // Waiting exactly retryAfterMs is enough for the same request... (with
        // a backwards clock it is not: see the known-bug tests)
        if (!gcraConsume(tat, now + d.retryAfterMs, limit, cost).decision.allowed)
          fail('denied again after retryAfterMs', now, cost, tat, d);
        // ...and not a generous overestimate: 1 % of a token earlier is too early.
        const early = d.retryAfterMs - interval * 0.01;
        if (early > 0 && gcraConsume(tat, now + early, limit, cost).decision.allowed)
          fail('admitted before retryAfterMs', now, cost, tat, d);
      }
    }
    tat = nextTat;
  }
  return { admissions, violations, limitDenials, minAt, maxAt, backJumps };
}

describe('gcra: properties over seeded random sequences', () => {
  const seeds = [1, 2, 3, 42, 1337, 20240607, 0xdecafbad, 987654321];

  describe.each(propertyLimits.map((l) => [l.label, l] as const))('%s', (_label, limit) => {
    it('forward time: every window admits <= burst + rate*T, decisions consistent, retryAfterMs exact', () => {
      for (const seed of seeds) {
        const run = randomRun(limit, { seed, start: 0, steps: 400, backwards: false });
        // A run that never hits the limit (or never admits) would prove little.
        expect(run.limitDenials).toBeGreaterThan(10);
        expect(run.admissions.length).toBeGreaterThan(10);
        expect({
          seed,
          violations: [...run.violations, ...windowBoundViolations(run.admissions, limit)],
        }).toEqual({ seed, violations: [] });
      }
    });

    // 1e6/s at this magnitude is a known precision bug (see the `failing` tests below).
    if (limit.rate < 1e6) {
      it('same, at Date.now()-scale times', () => {
        for (const seed of seeds) {
          const run = randomRun(limit, {
            seed: seed ^ 0x5bd1e995,
            start: 1_700_000_000_000,
            steps: 400,
            backwards: false,
          });
          expect(run.limitDenials).toBeGreaterThan(10);
          expect({
            seed,
            violations: [...run.violations, ...windowBoundViolations(run.admissions, limit)],
          }).toEqual({ seed, violations: [] });
        }
      });
    }

    it('time going backwards never yields extra tokens, remaining stays in [0, burst]', () => {
      for (const seed of seeds) {
        const run = randomRun(limit, { seed: seed + 7, start: 0, steps: 400, backwards: true });
        expect(run.limitDenials).toBeGreaterThan(10);
        expect(run.backJumps).toBeGreaterThan(20);
        const interval = emissionIntervalMs(limit);
        const total = run.admissions.reduce((sum, a) => sum + a.cost, 0);
        // Only the span of clock values actually seen can have refilled the
        // bucket: a jump back followed by the same time again refills nothing.
        const bound =
          limit.burst +
          (limit.rate * (run.maxAt - run.minAt)) / 1000 +
          toleranceMs(run.maxAt, interval) / interval;
        expect({ seed, violations: run.violations, excess: Math.max(0, total - bound) }).toEqual({
          seed,
          violations: [],
          excess: 0,
        });
      }
    });
  });

  it('peek never changes with repeated calls and never decreases as time moves forward', () => {
    const rand = seededRandom(99);
    for (const limit of propertyLimits) {
      const interval = emissionIntervalMs(limit);
      let tat: number | undefined;
      let now = 0;
      for (let i = 0; i < 50; i++) tat = gcraConsume(tat, now, limit, 1).tat; // drain (or nearly)
      let previous = gcraPeek(tat, now, limit);
      for (let s = 0; s < 100; s++) {
        now += rand() * interval * 0.7;
        const a = gcraPeek(tat, now, limit);
        expect(gcraPeek(tat, now, limit)).toEqual(a);
        expect(a.remaining).toBeGreaterThanOrEqual(previous.remaining);
        expect(a.resetMs).toBeLessThanOrEqual(previous.resetMs);
        previous = a;
      }
      expect(gcraPeek(tat, now + limit.burst * interval, limit).remaining).toBe(limit.burst);
    }
  });
});

/*
 * When the stored TAT is more than one bucket capacity ahead of `now` (clock
 * went backwards, or the limit changed so that C shrank, e.g. an adaptive rate
 * increase), retryAfterMs is measured from the stored TAT: a client that
 * honours Retry-After is not denied again. (Found by this suite: it used to
 * be computed from a clamped TAT.)
 */
describe('gcra: retryAfterMs after the bucket horizon moved back', () => {
  it('clock back by 5 s: waiting retryAfterMs (6000) is enough', () => {
    const limit = { rate: 1, burst: 3 };
    const { tat } = gcraConsume(undefined, 10_000, limit, 3); // tat 13_000
    const denied = gcraConsume(tat, 5000, limit, 1).decision;
    expect(denied.retryAfterMs).toBe(6000);
    expect(gcraConsume(tat, 5000 + denied.retryAfterMs, limit, 1).decision.allowed).toBe(true);
  });

  it('rate raised from 1/s to 2/s on an empty bucket: waiting retryAfterMs (2000) is enough', () => {
    const { tat } = gcraConsume(undefined, 0, { rate: 1, burst: 3 }, 3); // tat 3000, C was 3000
    const faster = { rate: 2, burst: 3 }; // C = 1500: the stored TAT is 1500 ms beyond it
    const denied = gcraConsume(tat, 0, faster, 1).decision;
    // Admitted once tat + 500 - t <= 1500, i.e. at t = 2000.
    expect(denied.retryAfterMs).toBe(2000);
    expect(gcraConsume(tat, denied.retryAfterMs, faster, 1).decision.allowed).toBe(true);
  });
});

/*
 * Precision at Date.now()-scale times. The TAT is an absolute time in ms held
 * in a double. Around Date.now() (~1.7e12 ms, between 2^40 and 2^41) doubles
 * are 2^-12 ms (0.000244 ms) apart, coarser than one token at 1e6/s (0.001 ms).
 * Rounding to nearest charged 4 steps = 0.0009765625 ms per token, 2.4 % too
 * cheap (1024 admitted of a burst of 1000), and at 1e7/s nothing at all (found
 * by this suite). Charges are now rounded up: such buckets may admit fewer
 * than their burst, never more. Stores avoid the problem by computing in time
 * relative to an epoch of their own (MemoryStore: its first `now`), where doubles
 * are fine-grained.
 */
describe('gcra: precision at Date.now()-scale times never admits more than the burst', () => {
  const now = 1_700_000_000_000;

  function admittedAtOneInstant(limit: BucketLimit, tries: number): number {
    let tat: number | undefined;
    let admitted = 0;
    for (let i = 0; i < tries; i++) {
      const outcome = gcraConsume(tat, now, limit, 1);
      if (!outcome.decision.allowed) break;
      admitted++;
      tat = outcome.tat;
    }
    return admitted;
  }

  // Each token is charged 5 steps (0.001220703125 ms): floor((1 + slack) / that) = 819.
  it('rate 1e6/s, burst 1000: at most 1000 single tokens at one instant (819)', () => {
    expect(admittedAtOneInstant({ rate: 1e6, burst: 1000 }, 2000)).toBe(819);
  });

  // interval 1e-4 ms is below one step: each token is charged one step, 0.000244 ms: 409 fit in 0.1 ms (+ slack).
  it('rate 1e7/s, burst 1000: at most 1000 single tokens at one instant (410)', () => {
    expect(admittedAtOneInstant({ rate: 1e7, burst: 1000 }, 5000)).toBeLessThanOrEqual(1000);
    expect(admittedAtOneInstant({ rate: 1e7, burst: 1000 }, 5000)).toBeGreaterThan(400);
  });

  // 0.1 ms per token is 409.6 steps, charged 410: 1000 tokens cost 0.24 ms more than the burst holds.
  it('rate 1e4/s, burst 1000: never more than the burst, at most one token short', () => {
    expect(admittedAtOneInstant({ rate: 1e4, burst: 1000 }, 2000)).toBe(999);
  });
});

describe('gcraRefund', () => {
  const limit = { rate: 10, burst: 5 }; // one token every 100 ms

  it('gives tokens back, never past full, and says when the bucket is full again', () => {
    const empty = [1, 2, 3, 4, 5].reduce<number | undefined>(
      (tat) => gcraConsume(tat, 0, limit, 1).tat,
      undefined,
    )!;
    expect(empty).toBe(500);
    const refunded = gcraRefund(empty, 0, limit, 2);
    expect(refunded).toBe(300);
    expect(gcraPeek(refunded, 0, limit).remaining).toBe(2);
    expect(gcraRefund(empty, 0, limit, 50)).toBeUndefined();
    expect(gcraRefund(empty, 450, limit, 1)).toBeUndefined(); // half a token short of full: one back fills it
    expect(gcraRefund(undefined, 0, limit, 3)).toBeUndefined();
  });
});

describe('gcraSettle', () => {
  const limit = { rate: 10, burst: 5 }; // one token every 100 ms

  it('refunds a lower actual like gcraRefund: never fuller than full', () => {
    expect(gcraSettle(500, 0, limit, -2)).toBe(300);
    expect(gcraSettle(500, 0, limit, -50)).toBeUndefined();
    expect(gcraSettle(undefined, 0, limit, -3)).toBeUndefined();
  });

  it('charges a higher actual past empty: the bucket goes into debt and the next request waits for it', () => {
    // Empty (TAT 500), then 2.5 tokens more than the bucket held: 250 ms of debt.
    const inDebt = gcraSettle(500, 0, limit, 2.5)!;
    expect(inDebt).toBe(750);
    const next = gcraConsume(inDebt, 0, limit, 1);
    expect(next.decision).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 350 });
    expect(next.tat).toBe(inDebt); // a denial charges nothing
    expect(gcraConsume(inDebt, 349, limit, 1).decision.allowed).toBe(false);
    expect(gcraConsume(inDebt, 350, limit, 1).decision.allowed).toBe(true);
    // A full bucket charged past its burst: in debt too (a fresh key's TAT counts from now).
    expect(gcraSettle(undefined, 1000, limit, 7)).toBe(1700);
  });

  it('leaves the bucket as it is for a difference of 0', () => {
    expect(gcraSettle(300, 0, limit, 0)).toBe(300);
    expect(gcraSettle(300, 400, limit, 0)).toBeUndefined();
  });
});

describe('gcraBlock', () => {
  const limit: BucketLimit = { rate: 10, burst: 5 }; // a token every 100 ms

  it('empty until the end of the block, one token then, refilling at the rate after', () => {
    const tat = gcraBlock(undefined, 0, limit, 60_000);
    expect(tat).toBe(60_400);
    expect(gcraConsume(tat, 59_999, limit, 1).decision).toMatchObject({
      allowed: false,
      retryAfterMs: 1,
    });
    const first = gcraConsume(tat, 60_000, limit, 1);
    expect(first.decision).toMatchObject({ allowed: true, remaining: 0 });
    expect(gcraConsume(first.tat, 60_000, limit, 1).decision).toMatchObject({
      allowed: false,
      retryAfterMs: 100,
    });
  });

  it('never shortens a block, and a bucket in the past counts from now', () => {
    expect(gcraBlock(90_000, 0, limit, 1000)).toBe(90_000);
    expect(gcraBlock(-5, 1000, limit, 1000)).toBe(2400);
  });
});
