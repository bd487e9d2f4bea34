// Adaptive concurrency against a simulated downstream (issue 31's targets), side by side
// with a static limit at the true capacity and no limit. Discrete-event simulation on its
// own clock (lib/concurrency/adaptive/simulation): deterministic, seconds of CPU.
//
//   npm run build && node bench/concurrency/run.mjs            prints the tables
//   npm run build && node bench/concurrency/run.mjs --write    also writes docs/concurrency-adaptive.svg
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { simulate } from '../../dist/esm/lib/concurrency/adaptive/simulation/simulate.js';
// The scenarios (and the targets' checks in simulate.spec.ts) are written once, in scenarios.ts.
import {
  ADAPTIVE as adaptive,
  BACKLOGGED,
  capacityChange,
  MEASURE_FROM_MS,
  PARTITIONED,
  STEADY,
  staticAt,
} from '../../dist/esm/lib/concurrency/adaptive/simulation/scenarios.js';
const ms = (value) => `${Math.round(value)} ms`;

/** First second from which every later limit stays within ±25 % of `c` (until `toMs`). */
function settledAt(result, c, fromMs, toMs = Infinity) {
  const points = result.timeline.filter((p) => p.atMs > fromMs && p.atMs <= toMs);
  let at;
  for (const p of points) {
    const inside = p.limit >= 0.75 * c && p.limit <= 1.25 * c;
    if (!inside) at = undefined;
    else at ??= p.atMs;
  }
  return at === undefined ? 'never' : `${((at - fromMs) / 1000).toFixed(0)} s`;
}

function range(result, fromMs, toMs) {
  const limits = result.timeline
    .filter((p) => p.atMs > fromMs && p.atMs <= toMs)
    .map((p) => p.limit);
  return `${Math.min(...limits)}–${Math.max(...limits)}`;
}

const lines = [];
const say = (line = '') => lines.push(line);

// 1. C = 20, 50 ms, offered 800/s (twice the capacity), 60 s, measured after the first 10 s.
const runs = [
  ['adaptive', simulate({ ...STEADY, limit: adaptive }, MEASURE_FROM_MS)],
  ['static at C (20)', simulate({ ...STEADY, limit: staticAt(20) }, MEASURE_FROM_MS)],
  ['no limit', simulate({ ...STEADY, limit: undefined }, MEASURE_FROM_MS)],
];
say('C = 20 in flight, 50 ms unloaded, offered 800/s (2x), 60 s, measured from 10 s:');
say();
say('| limit | goodput | of static | p50 | p99 | settled (±25 % of C) | limit from 10 s |');
say('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
const staticGoodput = runs[1][1].goodput;
for (const [name, r] of runs) {
  const limited = name !== 'no limit';
  say(
    `| ${name} | ${r.goodput.toFixed(0)}/s | ${((100 * r.goodput) / staticGoodput).toFixed(0)} % | ${ms(r.p50Ms)} | ${ms(r.p99Ms)} | ${name === 'adaptive' ? settledAt(r, 20, 0) : '–'} | ${limited ? range(r, 10_000, 60_000) : '–'} |`,
  );
}

// 2. C changes mid-run, offered 1600/s.
say();
say('C changes at 30 s (offered 1600/s):');
say();
say('| change | limit before | followed within (±25 % of the new C) | limit after |');
say('| --- | ---: | ---: | ---: |');
for (const [from, to] of [
  [40, 20],
  [20, 40],
]) {
  const r = simulate(capacityChange(from, to));
  say(
    `| C ${from} → ${to} | ${range(r, 20_000, 30_000)} | ${settledAt(r, to, 30_000)} | ${range(r, 50_000, 70_000)} |`,
  );
}

// 3. Partitions.
const parts = simulate(PARTITIONED, MEASURE_FROM_MS);
say();
say('Partitions { critical: 0.9, batch: 0.1 }, critical 300/s + batch 500/s (2x C = 20 together):');
say();
say('| partition | offered | served | share served |');
say('| --- | ---: | ---: | ---: |');
['critical', 'batch'].forEach((name, i) => {
  const p = parts.partitions[i];
  say(`| ${name} | ${p.offered} | ${p.served} | ${((100 * p.served) / p.offered).toFixed(1)} % |`);
});

// 4. Backlog.
const queued = simulate(BACKLOGGED, MEASURE_FROM_MS);
say();
say(
  `Backlog { size: 100, timeout: 1 s } at C = 20, 800/s: goodput ${queued.goodput.toFixed(0)}/s, p50 ${ms(queued.p50Ms)}, p99 ${ms(queued.p99Ms)} (waiting included).`,
);
console.log(lines.join('\n'));

if (process.argv.includes('--write')) {
  const r = simulate({
    durationMs: 90_000,
    capacity: (t) => (t < 30_000 ? 20 : t < 60_000 ? 10 : 40),
    offeredPerSecond: [1600],
    limit: adaptive,
  });
  const svg = chart(r, (t) => (t < 30_000 ? 20 : t < 60_000 ? 10 : 40));
  writeFileSync(
    fileURLToPath(new URL('../../docs/concurrency-adaptive.svg', import.meta.url)),
    svg,
  );
  console.error('wrote docs/concurrency-adaptive.svg');
}

/** Limit, in-flight and p99 latency per second, with C; two stacked panels. */
function chart(result, capacity) {
  const W = 720;
  const H = 360;
  const left = 50;
  const right = W - 20;
  const x = (atMs) => left + ((right - left) * atMs) / 90_000;
  const panel = (top, height, max, series) => {
    const y = (v) => top + height - (height * Math.min(v, max)) / max;
    let out = `<line x1="${left}" y1="${top + height}" x2="${right}" y2="${top + height}" stroke="#999"/>`;
    out += `<line x1="${left}" y1="${top}" x2="${left}" y2="${top + height}" stroke="#999"/>`;
    for (const tick of [0, max / 2, max])
      out += `<text x="${left - 6}" y="${y(tick) + 4}" font-size="10" text-anchor="end">${tick}</text>`;
    for (const { values, color, dash, label, i } of series) {
      const d = values
        .map(([t, v], k) => `${k === 0 ? 'M' : 'L'}${x(t).toFixed(1)},${y(v).toFixed(1)}`)
        .join(' ');
      out += `<path d="${d}" fill="none" stroke="${color}" stroke-width="1.6"${dash ? ' stroke-dasharray="4 3"' : ''}/>`;
      out += `<text x="${left + 10 + i * 150}" y="${top - 4}" font-size="11" fill="${color}">${label}</text>`;
    }
    return out;
  };
  const t = result.timeline;
  const cSeries = t
    .map((p) => [p.atMs - 1000, capacity(p.atMs - 1)])
    .concat([[90_000, capacity(89_999)]]);
  let body = panel(30, 130, 60, [
    { i: 0, label: 'limit', color: '#1f77b4', values: t.map((p) => [p.atMs, p.limit]) },
    { i: 1, label: 'in flight', color: '#2ca02c', values: t.map((p) => [p.atMs, p.inFlight]) },
    { i: 2, label: 'capacity C', color: '#d62728', dash: true, values: cSeries },
  ]);
  body += panel(210, 110, 200, [
    { i: 0, label: 'p99 latency (ms)', color: '#9467bd', values: t.map((p) => [p.atMs, p.p99Ms]) },
    { i: 1, label: 'p50 latency (ms)', color: '#8c564b', values: t.map((p) => [p.atMs, p.p50Ms]) },
  ]);
  for (const s of [0, 30, 60, 90])
    body += `<text x="${x(s * 1000)}" y="${H - 20}" font-size="10" text-anchor="middle">${s} s</text>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
<text x="${W / 2}" y="14" font-size="12" text-anchor="middle">Adaptive concurrency (simulation, offered 1600/s, 50 ms unloaded): C 20 → 10 → 40</text>
${body}
</svg>
`;
}
