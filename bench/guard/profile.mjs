// Where the guard's time goes: runs the guard micro-benchmark for one case
// under `node --cpu-prof` and sums, for the functions of the guard's path,
// the samples in which each one is on the stack (inclusive), as a share of
// the samples inside RateLimitGuard.canActivate. V8 inlines small functions
// into their callers, so a function missing here was counted in its caller.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { round, runNodeJson } from '../lib/util.mjs';

const SCRIPT = fileURLToPath(new URL('./guard.mjs', import.meta.url));

// [label, file (end of the URL), function name]
const PARTS = [
  ['RateLimitGuard.canActivate (all)', 'lib/rate-limit.guard.js', 'canActivate'],
  ['  RateLimiter.evaluate → MemoryStore.consume', 'adapters/memory/memory.store.js', 'consume'],
  [
    "    BucketShard.slotOf (the bucket's slot: one Map lookup by caller identity)",
    'adapters/memory/bucket-shard.js',
    'slotOf',
  ],
  [
    '    MemoryStore.insert (a new bucket: Map set, sweep step, cap)',
    'adapters/memory/memory.store.js',
    'insert',
  ],
  ['    MemoryStore.sweep (incremental expiry)', 'adapters/memory/memory.store.js', 'sweep'],
  ['    gcraConsume (when not inlined)', 'lib/algorithms/gcra.js', 'gcraConsume'],
  ['  key: byAddress (canonical client address)', 'lib/keys/key-strategy.js', 'byAddress'],
  ['  decide (admitted: headers)', 'lib/rate-limit.guard.js', 'decide'],
  ['    writeRateLimitHeaders', 'lib/headers/write-headers.js', 'writeRateLimitHeaders'],
  [
    '      HttpAdapter.setHeader (Fastify adapter + reply)',
    'adapters/fastify-adapter.js',
    'setHeader',
  ],
  ['  getRequestResponse (switchToHttp)', 'lib/rate-limit.guard.js', 'getRequestResponse'],
  ['  clock.now (Date.now)', 'lib/clock.js', 'now'],
];

export async function profileGuard(calls, caseId = 'holdup') {
  const dir = mkdtempSync(join(tmpdir(), 'holdup-guard-prof-'));
  try {
    await runNodeJson(
      SCRIPT,
      [calls, 1],
      ['--cpu-prof', '--cpu-prof-interval', '100', `--cpu-prof-dir=${dir}`],
      { env: { BENCH_GUARD_ONLY: caseId } },
    );
    const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    const parent = new Map();
    for (const node of profile.nodes)
      for (const child of node.children ?? []) parent.set(child, node.id);
    const hits = new Map();
    for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
    const matches = (node, [, url, name]) =>
      node.callFrame.functionName === name && node.callFrame.url.endsWith(url);
    const inclusive = PARTS.map(() => 0);
    let selfInCanActivate = 0;
    for (const [id, count] of hits) {
      const seen = new Set();
      for (let current = id; current !== undefined; current = parent.get(current)) {
        const node = byId.get(current);
        PARTS.forEach((part, i) => {
          if (!seen.has(i) && matches(node, part)) {
            seen.add(i);
            inclusive[i] += count;
          }
        });
      }
      if (matches(byId.get(id), PARTS[0])) selfInCanActivate += count;
    }
    const total = inclusive[0];
    return {
      case: caseId,
      calls,
      samplesInCanActivate: total,
      parts: [
        ...PARTS.map(([label], i) => ({
          label,
          sharePercent: round((100 * inclusive[i]) / total, 1),
        })),
        {
          label: '  canActivate itself (checks, key string, result objects)',
          sharePercent: round((100 * selfInCanActivate) / total, 1),
        },
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
