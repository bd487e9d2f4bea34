// How far the sliding-window counter (Cloudflare's weighted two-window
// estimate, lib/algorithms/sliding-window.ts) is from an exact sliding log,
// on seeded random traces. Deterministic: the same numbers on every run.
//
//   npm run build && node scripts/window-error.mjs
//
// For every request the library's slidingWindowConsume decides; beside it,
// the exact count of what that limiter admitted in the last windowMs (a log
// of timestamps) says what an exact sliding log would have decided on the
// same history. Reported per trace:
// - wrongly admitted: admitted although exact count + 1 > quota;
// - wrongly denied:   denied although exact count + 1 <= quota;
// - estimate error:   estimate - exact count, in requests (mean |e|, p99 |e|, extremes);
// - worst window:     the most the counter admitted in any windowMs (exact), vs the quota.
import { seededRandom } from 'nestjs-holdup/adaptive';
import { slidingWindowConsume } from 'nestjs-holdup/algorithms';

const QUOTA = 100;
const WINDOW_MS = 60_000;
const DURATION_MS = 6 * 3_600_000; // six hours of traffic per trace
const limit = { algorithm: 'sliding-window', quota: QUOTA, windowMs: WINDOW_MS };

/** Arrival times (ms) of a Poisson process whose rate (per second) may vary with time. */
function arrivals(seed, ratePerSecond) {
  const random = seededRandom(seed);
  const times = [];
  // Thinning: candidates at the maximum rate, kept with probability rate(t) / max.
  const max = Math.max(
    ...Array.from({ length: 1000 }, (_, i) => ratePerSecond((i / 1000) * DURATION_MS)),
  );
  for (let t = 0; t < DURATION_MS;) {
    t += (-Math.log(1 - random()) / max) * 1000;
    if (random() * max < ratePerSecond(t)) times.push(t);
  }
  return times;
}

const TRACES = [
  ['steady, 1.5x the quota', 1, () => (1.5 * QUOTA) / 60],
  ['steady, 0.9x the quota', 2, () => (0.9 * QUOTA) / 60],
  // 20 s bursts at 8x the quota's average rate, then 100 s of near silence.
  [
    'bursty: 20 s at 8x, 100 s at 0.1x',
    3,
    (t) => (t % 120_000 < 20_000 ? (8 * QUOTA) / 60 : (0.1 * QUOTA) / 60),
  ],
  // Bursts that start at random phases relative to the window edges.
  [
    'bursty, random phase: 5 s at 20x',
    4,
    (t) => (Math.sin(t / 7_919) > 0.93 ? (20 * QUOTA) / 60 : (0.3 * QUOTA) / 60),
  ],
];

function measure(times) {
  const base = 1_700_000_040_000; // a multiple of the window
  let state;
  const admitted = []; // exact log of admitted times
  let head = 0; // first admitted time inside the last window
  let wronglyAdmitted = 0;
  let wronglyDenied = 0;
  let sumAbs = 0;
  const errors = [];
  for (const offset of times) {
    const now = base + offset;
    while (head < admitted.length && admitted[head] <= now - WINDOW_MS) head++;
    const exact = admitted.length - head;
    const { state: next, decision } = slidingWindowConsume(state, now, limit, 1);
    // The estimate the counter decided on (sliding-window.ts's arithmetic, from the same state).
    const estimate = estimateOf(state, now);
    const error = estimate - exact;
    errors.push(error);
    sumAbs += Math.abs(error);
    const exactAdmits = exact + 1 <= QUOTA;
    if (decision.allowed && !exactAdmits) wronglyAdmitted++;
    if (!decision.allowed && exactAdmits) wronglyDenied++;
    if (decision.allowed) {
      state = next;
      admitted.push(now);
    }
  }
  errors.sort((a, b) => Math.abs(a) - Math.abs(b));
  return {
    requests: times.length,
    admitted: admitted.length,
    wronglyAdmitted,
    wronglyDenied,
    meanAbs: sumAbs / times.length,
    p99Abs: Math.abs(errors[Math.floor(errors.length * 0.99)] ?? 0),
    minError: Math.min(...errors),
    maxError: Math.max(...errors),
    worstWindow: worstWindow(admitted),
  };
}

/** The weighted estimate of a state at now, as sliding-window.ts computes it. */
function estimateOf(state, now) {
  if (state === undefined) return 0;
  const start = Math.floor(now / WINDOW_MS) * WINDOW_MS;
  if (state.start >= start)
    return (
      state.previous * (1 - (Math.max(now, state.start) - state.start) / WINDOW_MS) + state.count
    );
  if (state.start === start - WINDOW_MS) return state.count * (1 - (now - start) / WINDOW_MS);
  return 0;
}

/** The most admitted within any windowMs (closed at the end, open at the start), by two pointers. */
function worstWindow(times) {
  let worst = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[j] <= times[i] - WINDOW_MS) j++;
    worst = Math.max(worst, i - j + 1);
  }
  return worst;
}

const pct = (part, whole) => `${((100 * part) / whole).toFixed(3)} %`;
console.log(
  `sliding-window counter vs an exact sliding log: quota ${QUOTA} per ${WINDOW_MS / 1000} s, ${DURATION_MS / 3_600_000} h per trace`,
);
for (const [name, seed, rate] of TRACES) {
  const r = measure(arrivals(seed, rate));
  console.log(`\n${name}: ${r.requests} requests, ${r.admitted} admitted`);
  console.log(
    `  wrongly admitted ${r.wronglyAdmitted} (${pct(r.wronglyAdmitted, r.requests)}), wrongly denied ${r.wronglyDenied} (${pct(r.wronglyDenied, r.requests)})`,
  );
  console.log(
    `  estimate - exact: mean |e| ${r.meanAbs.toFixed(2)}, p99 |e| ${r.p99Abs.toFixed(2)}, from ${r.minError.toFixed(2)} to +${r.maxError.toFixed(2)} requests`,
  );
  console.log(
    `  most admitted in any ${WINDOW_MS / 1000} s: ${r.worstWindow} (${(r.worstWindow / QUOTA).toFixed(2)}x the quota)`,
  );
}
