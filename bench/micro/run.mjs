// Decision micro-benchmark: every case in a fresh process, repetitions
// interleaved (all cases once, then all again, ...), median ns per decision.
import { fileURLToPath } from 'node:url';
import { runSeed } from '../lib/shuffle.mjs';
import { log, median, QUICK, round, runNodeJson, withRetry } from '../lib/util.mjs';

const SCRIPT = fileURLToPath(new URL('./decision.mjs', import.meta.url));

export const MICRO_SETTINGS = QUICK
  ? {
      repetitions: 3,
      randomOrderRepetitions: 3,
      syncIterations: 200_000,
      asyncIterations: 100_000,
      throttlerHotIterations: 11_000,
    }
  : {
      repetitions: 5,
      // The random-order cells (issue 27; 12 of the 32 cases, the longest to
      // run) 3 times: their verdicts have wide margins (the run of 6cd9ded:
      // 0.59-1.34x the floor against <= 3x, rate-limiter-flexible 2.46-15.7x
      // ours against >= 1.5x), far more than a median of 3 rather than 5 moves.
      randomOrderRepetitions: 3,
      syncIterations: 1_000_000,
      asyncIterations: 200_000,
      throttlerHotIterations: 11_000,
    };

/** `versus`: the row of ours it is compared with (same key pattern). */
export const MICRO_CASES = [
  { id: 'date-now', label: 'Date.now() alone (the clock read every decision pays)', kind: 'sync' },
  {
    id: 'gcra-raw',
    label: 'holdup gcraConsume + Date.now() (the algorithm alone)',
    kind: 'sync',
    versus: 'holdup-hot',
  },
  { id: 'holdup-hot', label: 'holdup MemoryStore.consume, hot key', kind: 'sync' },
  { id: 'holdup-100k', label: 'holdup MemoryStore.consume, 100k keys round-robin', kind: 'sync' },
  {
    id: 'throttler-100k',
    label: '@nestjs/throttler storage.increment (async), 100k keys',
    kind: 'async',
    versus: 'holdup-100k',
  },
  {
    id: 'throttler-hot',
    label: '@nestjs/throttler storage.increment (async), hot key, log ~1k hits',
    kind: 'throttler-hot',
    versus: 'holdup-hot',
  },
  {
    id: 'rlf-hot',
    label: 'rate-limiter-flexible RateLimiterMemory.consume (async), hot key',
    kind: 'async',
    versus: 'holdup-hot',
  },
  {
    id: 'rlf-100k',
    label: 'rate-limiter-flexible RateLimiterMemory.consume (async), 100k keys',
    kind: 'async',
    versus: 'holdup-100k',
  },
];

/**
 * Issue 14's matrix: the floor, ours, rate-limiter-flexible × 1 key / 10k keys × allowed / denied;
 * issue 27's: 10k and 100k callers in a random order (the same for every contender, from the run's seed).
 */
export const TARGET_CELLS = [
  '1-allowed',
  '1-denied',
  '10k-allowed',
  '10k-denied',
  '10k-random-allowed',
  '10k-random-denied',
  '100k-random-allowed',
  '100k-random-denied',
];
const cellLabel = (cell) =>
  cell
    .replace(/-random-/, ' keys in random order, ')
    .replace(/^(\d+k?)-(?!.*random)/, '$1 key(s), ');
for (const cell of TARGET_CELLS) {
  MICRO_CASES.push(
    {
      id: `floor-${cell}`,
      label: `floor: hand-written bucket in a Map, ${cellLabel(cell)}`,
      kind: 'sync',
    },
    {
      id: `holdup-${cell}`,
      label: `holdup MemoryStore.consume, ${cellLabel(cell)}`,
      kind: 'sync',
      versus: `floor-${cell}`,
    },
    {
      id: `rlf-${cell}`,
      label: `rate-limiter-flexible consume, ${cellLabel(cell)}`,
      kind: 'async',
      versus: `holdup-${cell}`,
    },
  );
}

function iterationsOf(kind) {
  if (kind === 'async') return MICRO_SETTINGS.asyncIterations;
  if (kind === 'throttler-hot') return MICRO_SETTINGS.throttlerHotIterations;
  return MICRO_SETTINGS.syncIterations;
}

export async function runMicro() {
  const samples = Object.fromEntries(MICRO_CASES.map(({ id }) => [id, []]));
  for (let rep = 0; rep < MICRO_SETTINGS.repetitions; rep++) {
    for (const { id, kind } of MICRO_CASES) {
      if (id.includes('-random-') && rep >= MICRO_SETTINGS.randomOrderRepetitions) continue;
      const result = await withRetry(`micro ${id}`, () =>
        runNodeJson(SCRIPT, [id, iterationsOf(kind)]),
      );
      samples[id].push(result);
      log(`micro rep ${rep + 1} ${id.padEnd(15)} ${result.nsPerOp.toFixed(0)} ns/decision`);
    }
  }
  const medians = Object.fromEntries(
    MICRO_CASES.map(({ id }) => [id, median(samples[id].map((s) => s.nsPerOp))]),
  );
  const rows = MICRO_CASES.map(({ id, label, kind, versus }) => {
    const row = {
      case: id,
      label,
      iterations: iterationsOf(kind),
      nsPerOpRuns: samples[id].map((s) => round(s.nsPerOp, 1)),
      nsPerOpMedian: round(medians[id], 1),
      // How many times our decision's cost this one is (same key pattern).
      timesOurs: versus ? round(medians[id] / medians[versus], 2) : undefined,
      versus,
    };
    if (id === 'throttler-hot')
      row.nsPerOpAtLog10kMedian = round(median(samples[id].map((s) => s.nsPerOpAtLog10k)), 1);
    return row;
  });
  return { settings: { ...MICRO_SETTINGS, randomOrderSeed: runSeed() }, rows };
}
