// Guard micro-benchmark section: runs bench/guard/guard.mjs twice (the
// metrics cases in a process of their own), repetitions interleaved inside
// each process, medians per case.
import { fileURLToPath } from 'node:url';
import { log, median, QUICK, round, runNodeJson, withRetry } from '../lib/util.mjs';
import { profileGuard } from './profile.mjs';

const SCRIPT = fileURLToPath(new URL('./guard.mjs', import.meta.url));

export const GUARD_SETTINGS = QUICK
  ? { calls: 50_000, repetitions: 3, metricsRepetitions: 5, profileCalls: 200_000 }
  : { calls: 100_000, repetitions: 5, metricsRepetitions: 9, profileCalls: 500_000 };

export const GUARD_CASES = [
  { id: 'noop', label: 'a guard that returns true (floor: context, await)' },
  {
    id: 'floor',
    label:
      'a hand-written lazy-refill bucket per client in a Map, writing one header (floor of issue 14), 100k clients',
  },
  {
    id: 'holdup',
    label: 'holdup RateLimitGuard, headers: draft, 100k clients (each bucket held between visits)',
  },
  {
    id: 'floor-random',
    label: 'the floor guard, 100k clients in a random order (the same for both)',
  },
  {
    id: 'holdup-random',
    label: 'holdup RateLimitGuard, headers: draft, 100k clients in a random order',
  },
  {
    id: 'floor-denied',
    label:
      "the floor guard denying (Retry-After, a 429 HttpException answered by Nest's exception filter), 1k clients",
  },
  {
    id: 'holdup-denied',
    label:
      "holdup RateLimitGuard denying (headers: draft, Retry-After; RateLimitExceededException answered by the module's filter), 1k clients",
  },
  {
    id: 'holdup-new',
    label:
      'holdup RateLimitGuard, headers: draft, 100k clients, every visit a new bucket (full again: inserted, and an old one swept)',
  },
  { id: 'holdup-noheaders', label: 'holdup RateLimitGuard, headers: false, 100k clients' },
  { id: 'holdup-hot', label: 'holdup RateLimitGuard, headers: draft, one client' },
  {
    id: 'holdup-adaptive',
    label: 'holdup RateLimitGuard on an adaptive route (headers left to the interceptor)',
  },
  { id: 'throttler', label: '@nestjs/throttler ThrottlerGuard, 100k clients, ttl 60 s' },
  {
    id: 'holdup-route',
    label: 'holdup RateLimitGuard, a static limit declared on the route, 100k clients',
  },
  {
    id: 'holdup-dynamic',
    label:
      'holdup RateLimitGuard, the same limit as a plan looked up synchronously per request (rate and burst functions)',
  },
  {
    id: 'route-noop-interceptor',
    label:
      'a route with a no-op interceptor, no guard: Nest InterceptorsConsumer + handler, awaited as the router does',
  },
  {
    id: 'route-adaptive',
    label: 'holdup adaptive route: RateLimitGuard + RateLimitInterceptor through the same pipeline',
  },
  {
    id: 'holdup-fresh',
    label:
      'holdup RateLimitGuard as `holdup`, created before each run like the metrics cases, then one untimed pass over the clients (their baseline)',
  },
  {
    id: 'holdup-otel',
    label:
      'holdup RateLimitGuard as `holdup`, metrics: OpenTelemetry SDK meter provider with a reader',
  },
  { id: 'holdup-prom', label: 'holdup RateLimitGuard as `holdup`, metrics: prom-client registry' },
];

// The metrics cases, measured in a process of their own with their own
// no-op guard: their cost is a difference of ~100 ns on ~1.3 µs, and among
// the dozen other applications of the main process (about a million buckets) it
// moved with where the lazily created app's buckets landed in the heap
// (+8 % to +59 % from one run to the next; alone +3 % to +8 %).
const METRICS_IDS = ['noop', 'holdup-fresh', 'holdup-otel', 'holdup-prom'];
const METRICS_ONLY = new Set(METRICS_IDS.slice(1));
const MAIN_IDS = GUARD_CASES.map(({ id }) => id).filter((id) => !METRICS_ONLY.has(id));

function runCases(label, ids, repetitions) {
  return withRetry(`guard ${label}`, () =>
    runNodeJson(SCRIPT, [GUARD_SETTINGS.calls, repetitions], [], {
      env: { BENCH_GUARD_ONLY: ids.join(',') },
    }),
  );
}

export async function runGuard() {
  const raw = await runCases('cases', MAIN_IDS, GUARD_SETTINGS.repetitions);
  const metrics = await runCases('metrics', METRICS_IDS, GUARD_SETTINGS.metricsRepetitions);
  for (const id of METRICS_ONLY) {
    raw.samples[id] = metrics.samples[id];
    if (metrics.wallSamples?.[id]) raw.wallSamples[id] = metrics.wallSamples[id];
    raw.headers[id] = metrics.headers[id];
  }
  const medians = Object.fromEntries(GUARD_CASES.map(({ id }) => [id, median(raw.samples[id])]));
  const metricsNoop = median(metrics.samples.noop);
  const rows = GUARD_CASES.map(({ id, label }) => ({
    case: id,
    label,
    nsPerCallRuns: raw.samples[id].map((v) => round(v, 0)),
    nsPerCallMedian: round(medians[id], 0),
    wallNsPerCallMedian: raw.wallSamples?.[id] ? round(median(raw.wallSamples[id]), 0) : undefined,
    nsAboveNoop:
      id === 'noop'
        ? undefined
        : round(medians[id] - (METRICS_ONLY.has(id) ? metricsNoop : medians.noop), 0),
    // Metrics cases against their baseline, created the same way (a fresh store each run), in their own process.
    metricsOverhead:
      id === 'holdup-otel' || id === 'holdup-prom'
        ? round(
            (medians[id] - medians['holdup-fresh']) / (medians['holdup-fresh'] - metricsNoop),
            3,
          )
        : undefined,
    timesOurs:
      id === 'throttler'
        ? round((medians[id] - medians.noop) / (medians.holdup - medians.noop), 2)
        : undefined,
    headersWritten: raw.headers[id],
    deniedAnswer: raw.deniedAnswers?.[id],
  }));
  const ns = (id) => rows.find((row) => row.case === id).nsPerCallMedian;
  log(
    `guard: holdup ${ns('holdup')} ns/call, throttler ${ns('throttler')} ns/call, noop ${ns('noop')} ns/call, with OpenTelemetry ${ns('holdup-otel')}, with prom-client ${ns('holdup-prom')}`,
  );
  const profile = await withRetry('guard profile', () =>
    profileGuard(GUARD_SETTINGS.profileCalls, 'holdup'),
  );
  return {
    settings: {
      ...GUARD_SETTINGS,
      metricsNoopNsPerCall: round(metricsNoop, 0),
      clients: raw.clients,
      clock: raw.clock,
      randomOrderSeed: raw.randomOrderSeed,
      platform: 'Fastify adapter, not listening; stand-in reply',
    },
    rows,
    profile,
  };
}
