// Guard micro-benchmark section: runs bench/guard/guard.mjs once (all cases,
// repetitions interleaved inside that process), medians per case.
import { fileURLToPath } from 'node:url';
import { log, median, QUICK, round, runNodeJson, withRetry } from '../lib/util.mjs';
import { profileGuard } from './profile.mjs';

const SCRIPT = fileURLToPath(new URL('./guard.mjs', import.meta.url));

export const GUARD_SETTINGS = QUICK
  ? { calls: 50_000, repetitions: 3, profileCalls: 200_000 }
  : { calls: 100_000, repetitions: 5, profileCalls: 500_000 };

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

export async function runGuard() {
  const raw = await withRetry('guard', () =>
    runNodeJson(SCRIPT, [GUARD_SETTINGS.calls, GUARD_SETTINGS.repetitions]),
  );
  const medians = Object.fromEntries(GUARD_CASES.map(({ id }) => [id, median(raw.samples[id])]));
  const rows = GUARD_CASES.map(({ id, label }) => ({
    case: id,
    label,
    nsPerCallRuns: raw.samples[id].map((v) => round(v, 0)),
    nsPerCallMedian: round(medians[id], 0),
    wallNsPerCallMedian: raw.wallSamples?.[id] ? round(median(raw.wallSamples[id]), 0) : undefined,
    nsAboveNoop: id === 'noop' ? undefined : round(medians[id] - medians.noop, 0),
    // Metrics cases against their baseline, created the same way (a fresh store each run).
    metricsOverhead:
      id === 'holdup-otel' || id === 'holdup-prom'
        ? round(
            (medians[id] - medians['holdup-fresh']) / (medians['holdup-fresh'] - medians.noop),
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
      clients: raw.clients,
      clock: raw.clock,
      randomOrderSeed: raw.randomOrderSeed,
      platform: 'Fastify adapter, not listening; stand-in reply',
    },
    rows,
    profile,
  };
}
