// What each algorithm admits on the same bursty trace, as a picture
// (docs/algorithms.svg, hand-written SVG), plus the numbers docs/algorithms.md
// quotes. Deterministic (seeded trace). Uses the library's pure functions.
//
//   npm run build && node scripts/algorithms-figure.mjs
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { seededRandom } from 'nestjs-holdup/adaptive';
import { fixedWindowConsume, gcraConsume, slidingWindowConsume } from 'nestjs-holdup/algorithms';

const OUT = fileURLToPath(new URL('../docs/algorithms.svg', import.meta.url));
const BASE = 1_700_000_040_000; // a multiple of 60 s: window edges at 0, 60, 120... s of the trace
const SECOND = 1000;
const MINUTE = 60 * SECOND;

/** A limiter over one key: admit(at ms since BASE) -> boolean, with the library's function. */
function limiter(kind, quota) {
  let state;
  const limit =
    kind === 'token-bucket'
      ? { algorithm: kind, rate: quota / 60, burst: quota }
      : { algorithm: kind, quota, windowMs: MINUTE };
  return (at) => {
    const now = BASE + at;
    const outcome =
      kind === 'token-bucket'
        ? (({ tat, decision }) => ({ state: tat, decision }))(gcraConsume(state, now, limit, 1))
        : kind === 'fixed-window'
          ? fixedWindowConsume(state, now, limit, 1)
          : slidingWindowConsume(state, now, limit, 1);
    if (outcome.decision.allowed) state = outcome.state;
    return outcome.decision.allowed;
  };
}

const KINDS = [
  ['token-bucket', "token bucket: '10/min', burst 10"],
  ['fixed-window', "fixed window: '10/min'"],
  ['sliding-window', "sliding window: '10/min'"],
];

/** The bursty trace: Poisson arrivals at 0.1/s, with bursts (one straddling the 60 s edge). */
function trace() {
  const random = seededRandom(2026);
  const rate = (t) =>
    t >= 48 && t < 60
      ? 1.2
      : t >= 60 && t < 68
        ? 1.6
        : t >= 140 && t < 150
          ? 2
          : t >= 200 && t < 206
            ? 3
            : 0.1;
  const times = [];
  for (let t = 0; t < 240;) {
    t += -Math.log(1 - random()) / 3;
    if (t < 240 && random() * 3 < rate(t)) times.push(Math.round(t * SECOND));
  }
  return times;
}

/** The most admitted within any 60 s. */
function worstMinute(times) {
  let worst = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[j] <= times[i] - MINUTE) j++;
    worst = Math.max(worst, i - j + 1);
  }
  return worst;
}

const requests = trace();
const runs = KINDS.map(([kind, label]) => {
  const admit = limiter(kind, 10);
  const decisions = requests.map((at) => ({ at, allowed: admit(at) }));
  const admitted = decisions.filter((d) => d.allowed).map((d) => d.at);
  return { kind, label, decisions, admitted, worst: worstMinute(admitted) };
});

console.log(`bursty trace: ${requests.length} requests over 240 s, limit 10 per minute`);
for (const run of runs)
  console.log(`  ${run.label}: admitted ${run.admitted.length}, most in any 60 s: ${run.worst}`);

// Guarantees, with a greedy client that asks every 100 ms, under '5/min' (burst 5 for the bucket).
console.log("\ngreedy client (a request every 100 ms) under '5/min':");
for (const [kind, label] of KINDS) {
  const admit = limiter(kind, 5);
  const admitted = [];
  for (let at = 20 * SECOND; at < 20 * SECOND + 10 * MINUTE; at += 100)
    if (admit(at)) admitted.push(at - 20 * SECOND);
  const first14 = admitted.filter((at) => at < 14 * SECOND).length;
  console.log(
    `  ${label.replace('10/min', '5/min').replace('burst 10', 'burst 5')}: ${first14} in the first 14 s, most in any 60 s: ${worstMinute(admitted)}`,
  );
}
// The fixed window's edge: 5 just before it, 5 at it.
{
  const admit = limiter('fixed-window', 5);
  let count = 0;
  for (let i = 0; i < 5; i++) count += admit(MINUTE - 100 + i) ? 1 : 0;
  for (let i = 0; i < 5; i++) count += admit(MINUTE + i) ? 1 : 0;
  console.log(
    `  fixed window '5/min', 5 requests at 59.9 s and 5 at 60.0 s: ${count} admitted within 0.2 s`,
  );
}

writeFileSync(OUT, svg(runs));
console.log(`\nwrote ${OUT}`);

function svg(runs) {
  const W = 960;
  const LEFT = 60;
  const RIGHT = 20;
  const PANEL = 170;
  const TOP = 40;
  const plotW = W - LEFT - RIGHT;
  const x = (ms) => LEFT + (ms / (240 * SECOND)) * plotW;
  const H = TOP + runs.length * PANEL + 56;
  const parts = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
  );
  parts.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  parts.push(
    `<text x="${LEFT}" y="22" font-size="15" font-weight="bold">The same bursty trace (${requests.length} requests in 240 s) under three algorithms, limit 10 per minute</text>`,
  );
  runs.forEach((run, p) => {
    const top = TOP + p * PANEL;
    const yCount = (n) => top + 140 - (n / 20) * 100; // 0..20 admitted in the trailing 60 s
    parts.push(
      `<text x="${LEFT}" y="${top + 14}" font-weight="bold">${run.label}: ${run.admitted.length} admitted, at most ${run.worst} in any 60 s</text>`,
    );
    for (const edge of [0, 60, 120, 180, 240]) {
      parts.push(
        `<line x1="${x(edge * SECOND)}" y1="${top + 20}" x2="${x(edge * SECOND)}" y2="${top + 140}" stroke="#bbb" stroke-dasharray="3,3"/>`,
      );
    }
    // Requests: admitted as tall dark ticks, denied as short red ones.
    for (const d of run.decisions) {
      const color = d.allowed ? '#1f4e79' : '#d9534f';
      parts.push(
        `<line x1="${x(d.at).toFixed(1)}" y1="${top + 22}" x2="${x(d.at).toFixed(1)}" y2="${top + (d.allowed ? 36 : 29)}" stroke="${color}" stroke-width="1.2"/>`,
      );
    }
    // Admitted in the trailing 60 s, and the limit.
    parts.push(
      `<line x1="${LEFT}" y1="${yCount(10)}" x2="${W - RIGHT}" y2="${yCount(10)}" stroke="#888" stroke-dasharray="6,3"/>`,
    );
    parts.push(`<text x="${LEFT - 6}" y="${yCount(10) + 4}" text-anchor="end">10</text>`);
    parts.push(`<text x="${LEFT - 6}" y="${yCount(20) + 4}" text-anchor="end">20</text>`);
    parts.push(`<text x="${LEFT - 6}" y="${yCount(0) + 4}" text-anchor="end">0</text>`);
    const points = [];
    for (let t = 0; t <= 240 * SECOND; t += 250) {
      const n = run.admitted.filter((at) => at <= t && at > t - MINUTE).length;
      points.push(`${x(t).toFixed(1)},${yCount(n).toFixed(1)}`);
    }
    parts.push(
      `<polyline points="${points.join(' ')}" fill="none" stroke="#2a9d8f" stroke-width="1.8"/>`,
    );
  });
  const bottom = TOP + runs.length * PANEL;
  for (const s of [0, 60, 120, 180, 240])
    parts.push(`<text x="${x(s * SECOND)}" y="${bottom + 4}" text-anchor="middle">${s} s</text>`);
  parts.push(
    `<text x="${LEFT}" y="${bottom + 26}" fill="#444">Ticks: each request, tall blue = admitted, short red = denied. Dashed verticals: fixed-window edges.</text>`,
    `<text x="${LEFT}" y="${bottom + 42}" fill="#444">Green line: admitted in the trailing 60 s (dashed: the limit, 10).</text>`,
  );
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}
