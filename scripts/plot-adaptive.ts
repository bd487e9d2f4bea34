/**
 * Draws the adaptive-limit simulations as SVG (hand-written polylines, no
 * dependency, no browser) and prints the figures quoted in docs/adaptive.md.
 * Run with `npm run docs:plots` (scripts/plot-adaptive.mjs compiles this file
 * on the fly); `npm run docs:plots -- --compare` also prints how other
 * parameter sets fare. Deterministic: the jitter is seeded, so the output
 * only changes when the code does.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AdaptiveOptions } from '../lib/interfaces/adaptive-options.interface.js';
import {
  LATENCY_SCENARIO,
  REFERENCE_SCENARIO,
  REFERENCE_SEED,
  analyse,
  simulate,
  type PhaseReport,
  type SimulationSample,
  type SimulationScenario,
} from '../test/adaptive/aimd-simulation.js';

const SWEEP_SEEDS = 100;

interface Figure {
  readonly file: string;
  readonly title: string;
  readonly subtitle: string;
  readonly scenario: SimulationScenario;
}

const FIGURES: readonly Figure[] = [
  {
    file: 'adaptive-simulation.svg',
    title:
      'Adaptive limit (AIMD, defaults) in front of a downstream that rejects above its capacity',
    subtitle:
      'declared 150/s, adaptive { min: 10, max: 300 }; offered 300 req/s; capacity 100 → 50 (t = 60.4 s) → 100 (t = 120.4 s); jitter seed 1',
    scenario: REFERENCE_SCENARIO,
  },
  {
    file: 'adaptive-latency.svg',
    title:
      'Adaptive limit with latencyTargetMs: 100 in front of a queueing downstream (late feedback)',
    subtitle:
      'same load and capacity; FIFO server, 20 ms of work, 1 s timeout; outcomes reported on completion; jitter seed 1',
    scenario: LATENCY_SCENARIO,
  },
];

/** Parameter sets `--compare` puts next to the defaults, on the reference scenario. */
const VARIANTS: readonly [string, AdaptiveOptions][] = [
  ['defaults', {}],
  ['decrease 0.85', { decrease: 0.85 }],
  ['decrease 0.75', { decrease: 0.75 }],
  ['decrease 0.7', { decrease: 0.7 }],
  ['failureThreshold 0.05', { failureThreshold: 0.05 }],
  ['failureThreshold 0.2', { failureThreshold: 0.2 }],
  ['increase 3.75 (2.5 % of declared)', { increase: 3.75 }],
  ['increase 7.5 (5 % of declared)', { increase: 7.5 }],
  ['healthyWindows 1', { healthyWindows: 1 }],
  ['jitter 0', { jitter: 0 }],
];

/**
 * @param root the repository root (docs/ is written there).
 * @param args `--compare` also prints the defaults against other parameter sets.
 */
export function main(root: string, args: readonly string[] = []): void {
  for (const figure of FIGURES) {
    const samples = simulate(figure.scenario, REFERENCE_SEED);
    writeFileSync(join(root, 'docs', figure.file), renderSvg(figure, samples));
    console.log(`\n# ${figure.file}: ${figure.title}`);
    printPhases(`seed ${REFERENCE_SEED}`, analyse(samples, figure.scenario.phases));
    printSweep(figure.scenario);
  }
  if (args.includes('--compare')) printComparison();
}

function printComparison(): void {
  console.log(
    `\n# Reference scenario, other parameter sets, worst case over seeds 1-${SWEEP_SEEDS}` +
      `\n  (windows until within ±20 % for good: start / after halving / after recovery; ` +
      `rate band over every phase's last 30 windows; mean admitted and bad share there)`,
  );
  for (const [label, options] of VARIANTS) {
    const scenario = {
      ...REFERENCE_SCENARIO,
      adaptive: { ...REFERENCE_SCENARIO.adaptive, ...options },
    };
    const all = Array.from({ length: SWEEP_SEEDS }, (_, i) =>
      analyse(simulate(scenario, i + 1), scenario.phases),
    );
    const settle = scenario.phases.map((_, index) => {
      const values = all.map((r) => r[index]?.settledWindows);
      return values.some((v) => v === undefined)
        ? 'never'
        : String(Math.max(...(values as number[])));
    });
    const flat = all.flat();
    const low = Math.min(...flat.map((r) => r.steadyBand[0]));
    const high = Math.max(...flat.map((r) => r.steadyBand[1]));
    console.log(
      `  ${label.padEnd(34)} settle ${settle.join(' / ').padEnd(22)} band ${pct(low)}–${pct(high)}` +
        `  admitted ${pct(mean(flat.map((r) => r.steadyAdmitted)))}  bad ${pct(mean(flat.map((r) => r.steadyBadShare)))}`,
    );
  }
}

function printPhases(label: string, reports: readonly PhaseReport[]): void {
  console.log(`\n${label}:`);
  for (const r of reports) {
    console.log(
      `  capacity ${r.capacity}/s from ${r.fromMs / 1000} s (rate then ${r.startRate.toFixed(1)}/s): ` +
        `first move ${windows(r.firstReactionWindows)}, within ±20 % for good ${windows(r.settledWindows)}` +
        (r.bandAfterSettling
          ? ` (then ${pct(r.bandAfterSettling[0])}–${pct(r.bandAfterSettling[1])} of capacity)`
          : '') +
        `; last 30 windows: rate ${pct(r.steadyBand[0])}–${pct(r.steadyBand[1])}, admitted ${pct(r.steadyAdmitted)}, ` +
        `bad outcomes ${pct(r.steadyBadShare)}` +
        (r.steadyMaxLatencyMs > 0 ? `, max latency ${r.steadyMaxLatencyMs.toFixed(0)} ms` : ''),
    );
  }
}

function printSweep(scenario: SimulationScenario): void {
  const all = Array.from({ length: SWEEP_SEEDS }, (_, i) =>
    analyse(simulate(scenario, i + 1), scenario.phases),
  );
  console.log(`\nseeds 1-${SWEEP_SEEDS} (worst case per phase; mean for admitted and bad share):`);
  scenario.phases.forEach((phase, index) => {
    const reports = all.map((r) => r[index]).filter((r): r is PhaseReport => r !== undefined);
    const settled = reports.map((r) => r.settledWindows);
    const never = settled.filter((s) => s === undefined).length;
    const worstSettle = Math.max(...settled.map((s) => s ?? 0));
    const worstReaction = Math.max(
      ...reports.map((r) => r.firstReactionWindows ?? Number.POSITIVE_INFINITY),
    );
    const low = Math.min(...reports.map((r) => r.steadyBand[0]));
    const high = Math.max(...reports.map((r) => r.steadyBand[1]));
    const admitted = mean(reports.map((r) => r.steadyAdmitted));
    const bad = mean(reports.map((r) => r.steadyBadShare));
    const latency = Math.max(...reports.map((r) => r.steadyMaxLatencyMs));
    console.log(
      `  capacity ${phase.capacity}/s from ${phase.fromMs / 1000} s: first move <= ${worstReaction} window(s), ` +
        `within ±20 % for good after <= ${worstSettle} window(s)` +
        (never
          ? ` (never settled in ${never} of ${SWEEP_SEEDS} runs)`
          : ` (all ${SWEEP_SEEDS} runs)`) +
        `; last 30 windows: rate ${pct(low)}–${pct(high)}, admitted ${pct(admitted)}, bad outcomes ${pct(bad)}` +
        (latency > 0 ? `, max latency ${latency.toFixed(0)} ms` : ''),
    );
  });
  // The same scenario behind a fixed limit (min = max = declared): what adapting buys.
  const fixed = {
    ...scenario,
    adaptive: { ...scenario.adaptive, min: scenario.declared.rate, max: scenario.declared.rate },
  };
  printPhases(
    `fixed limit at the declared ${scenario.declared.rate}/s, for comparison`,
    analyse(simulate(fixed), fixed.phases),
  );
}

const W = 960;
const H = 440;
const M = { left: 64, right: 24, top: 70, bottom: 84 };

/** The figure as a standalone SVG document. */
export function renderSvg(figure: Figure, samples: readonly SimulationSample[]): string {
  const { scenario } = figure;
  const tMax = scenario.durationMs / 1000;
  const yMax = niceCeil(Math.max(scenario.offeredPerSecond, ...samples.map((s) => s.rate)) * 1.08);
  const x = (seconds: number): number => M.left + (seconds / tMax) * (W - M.left - M.right);
  const y = (perSecond: number): number =>
    H - M.bottom - (perSecond / yMax) * (H - M.top - M.bottom);
  const f = (n: number): string => n.toFixed(1);

  // Capacity as a step function, with its ±20 % band.
  const steps: [number, number][] = [];
  scenario.phases.forEach((phase, i) => {
    const end = (scenario.phases[i + 1]?.fromMs ?? scenario.durationMs) / 1000;
    steps.push([phase.fromMs / 1000, phase.capacity], [end, phase.capacity]);
  });
  const capacityLine = steps.map(([t, c]) => `${f(x(t))},${f(y(c))}`).join(' ');
  const band =
    steps.map(([t, c]) => `${f(x(t))},${f(y(c * 1.2))}`).join(' ') +
    ' ' +
    [...steps]
      .reverse()
      .map(([t, c]) => `${f(x(t))},${f(y(c * 0.8))}`)
      .join(' ');
  // The effective rate holds between window ends: draw it as steps too.
  const rate: string[] = [];
  samples.forEach((s, i) => {
    const next = samples[i + 1];
    rate.push(`${f(x(s.tMs / 1000))},${f(y(s.rate))}`);
    if (next) rate.push(`${f(x(next.tMs / 1000))},${f(y(s.rate))}`);
  });
  const admitted = samples
    .slice(1)
    .map((s) => `${f(x((s.tMs - 500) / 1000))},${f(y(s.admitted))}`)
    .join(' ');

  const xTicks = range(0, tMax, 20)
    .map(
      (t) =>
        `<line x1="${f(x(t))}" y1="${H - M.bottom}" x2="${f(x(t))}" y2="${H - M.bottom + 5}" stroke="#444"/>` +
        `<text x="${f(x(t))}" y="${H - M.bottom + 19}" text-anchor="middle">${t}</text>`,
    )
    .join('\n    ');
  const yTicks = range(0, yMax, yMax / 5)
    .map(
      (v) =>
        `<line x1="${M.left}" y1="${f(y(v))}" x2="${W - M.right}" y2="${f(y(v))}" stroke="#e4e4e4"/>` +
        `<text x="${M.left - 8}" y="${f(y(v) + 4)}" text-anchor="end">${Math.round(v)}</text>`,
    )
    .join('\n    ');

  const legendY = H - 28;
  const legend = [
    {
      label: `offered load (${scenario.offeredPerSecond} req/s)`,
      swatch: `stroke="#999" stroke-dasharray="6 4"`,
    },
    { label: 'downstream capacity', swatch: `stroke="#d9480f"` },
    { label: '±20 % of capacity', swatch: `stroke="#ffd8a8" stroke-width="8"` },
    { label: 'effective rate', swatch: `stroke="#1864ab" stroke-width="2"` },
    { label: 'admitted / s', swatch: `stroke="#74c0fc"` },
  ]
    .reduce<{ x: number; parts: string[] }>(
      ({ x: lx, parts }, item) => ({
        // About 6.4 px per character at 12 px: enough to keep labels apart.
        x: lx + 30 + item.label.length * 6.4 + 24,
        parts: [
          ...parts,
          `<line x1="${f(lx)}" y1="${legendY}" x2="${f(lx + 24)}" y2="${legendY}" ${item.swatch}/>` +
            `<text x="${f(lx + 30)}" y="${legendY + 4}">${escape(item.label)}</text>`,
        ],
      }),
      { x: M.left, parts: [] },
    )
    .parts.join('\n    ');

  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif" font-size="12" fill="#222">
  <title>${escape(figure.title)}</title>
  <desc>${escape(figure.subtitle)}. Generated by npm run docs:plots (scripts/plot-adaptive.ts).</desc>
  <rect width="${W}" height="${H}" fill="#fff"/>
  <text x="${M.left}" y="26" font-size="15" font-weight="600">${escape(figure.title)}</text>
  <text x="${M.left}" y="46" fill="#555">${escape(figure.subtitle)}</text>
  <g>
    ${yTicks}
  </g>
  <polygon points="${band}" fill="#ffd8a8" fill-opacity="0.6"/>
  <line x1="${f(x(0))}" y1="${f(y(scenario.offeredPerSecond))}" x2="${f(x(tMax))}" y2="${f(y(scenario.offeredPerSecond))}" stroke="#999" stroke-dasharray="6 4"/>
  <polyline points="${admitted}" fill="none" stroke="#74c0fc" stroke-width="1"/>
  <polyline points="${capacityLine}" fill="none" stroke="#d9480f" stroke-width="1.5"/>
  <polyline points="${rate.join(' ')}" fill="none" stroke="#1864ab" stroke-width="2"/>
  <line x1="${M.left}" y1="${H - M.bottom}" x2="${W - M.right}" y2="${H - M.bottom}" stroke="#444"/>
  <line x1="${M.left}" y1="${M.top}" x2="${M.left}" y2="${H - M.bottom}" stroke="#444"/>
  <g>
    ${xTicks}
  </g>
  <text x="${(M.left + W - M.right) / 2}" y="${H - M.bottom + 38}" text-anchor="middle">time (s) — one evaluation window per second</text>
  <text transform="translate(18 ${(M.top + H - M.bottom) / 2}) rotate(-90)" text-anchor="middle">requests / s (tokens / s)</text>
  <g>
    ${legend}
  </g>
</svg>
`;
}

function range(from: number, to: number, step: number): number[] {
  const out: number[] = [];
  for (let v = from; v <= to + 1e-9; v += step) out.push(v);
  return out;
}

function niceCeil(value: number): number {
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const m of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10])
    if (m * magnitude >= value) return m * magnitude;
  return 10 * magnitude;
}

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function mean(values: readonly number[]): number {
  return values.reduce((sum, v) => sum + v, 0) / values.length;
}

function pct(fraction: number): string {
  return `${(fraction * 100).toFixed(1)} %`;
}

function windows(count: number | undefined): string {
  return count === undefined ? 'never' : `after ${count} window(s)`;
}
