// The figures of one fleet run (bench/fleet/run.mjs), from every instance's
// hot-key admission times and the server's script-call count.

/**
 * Largest excess over GCRA's window bound among all intervals [t_i, t_j] of
 * the admission times: max over i <= j of (j - i + 1) - burst - rate x
 * (t_j - t_i). 0 or less: no interval of the run admitted more than
 * burst + rate x its length (a single pass: the best i for each j).
 */
export function worstWindowExcess(sortedMs, rate, burst) {
  let best = Number.NEGATIVE_INFINITY; // max over i <= j of (rate t_i / 1000 - i)
  let worst = Number.NEGATIVE_INFINITY;
  sortedMs.forEach((t, j) => {
    best = Math.max(best, (rate * t) / 1000 - j);
    worst = Math.max(worst, j + 1 - (rate * t) / 1000 + best - burst);
  });
  return worst;
}

export function percentile(values, p) {
  if (values.length === 0) return 0;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

export function analyse({
  n,
  scenario,
  store,
  fault,
  settings,
  done,
  calls,
  steadyCalls,
  warmUpMs,
  faultAtMs,
  faultMs,
}) {
  const sum = (pick) => done.reduce((total, d) => total + pick(d), 0);
  const times = done.flatMap((d) => d.times).sort((a, b) => a - b);
  const admitted = times.length;
  const { rate, burst, durationMs } = settings;
  const seconds = Math.max(durationMs, times.at(-1) ?? 0) / 1000;
  const bound = Math.floor(burst + rate * seconds);
  const warmAdmitted = sum((d) => d.warmAdmitted);
  const excess = worstWindowExcess(times, rate, burst);
  return {
    n,
    scenario: fault
      ? `${fault} (failMode local${fault === 'restart' ? `, down ${faultMs} ms` : ''})`
      : scenario === 'redis'
        ? 'RedisStore'
        : scenario,
    offered: sum((d) => d.offered),
    admitted,
    bound,
    admittedOverBound: admitted / bound,
    over: Math.max(0, admitted - bound),
    windowExcess: Math.max(0, Math.ceil(excess - 1e-9)),
    roundTrips: calls,
    roundTripsPerAdmitted: calls / Math.max(1, admitted + warmAdmitted),
    ...(steadyCalls === undefined
      ? {}
      : {
          steadyRoundTripsPerAdmitted:
            steadyCalls /
            Math.max(
              1,
              times.filter((t) => t >= warmUpMs).length +
                (warmAdmitted * (durationMs - warmUpMs)) / durationMs,
            ),
        }),
    warmAdmitted,
    p99Ms: percentile(
      done.flatMap((d) => d.latencies),
      0.99,
    ),
    errors: sum((d) => d.errors),
    localDecisions: sum((d) => d.local),
    perInstance: done.map((d) => d.times.length),
    ...(fault ? { faultAtMs, faultMs } : {}),
    ...(store === 'two-tier'
      ? {
          leasedTokens: sum((d) => d.stats.leasedTokens ?? 0),
          returnedTokens: sum((d) => d.stats.returnedTokens ?? 0),
          lostTokens: sum((d) => d.stats.lostTokens ?? 0),
          storeCalls: sum((d) => d.stats.redisCalls ?? 0),
          leasesTaken: sum((d) => d.stats.leasesTaken ?? 0),
          leasesReturned: sum((d) => d.stats.leasesReturned ?? 0),
        }
      : {}),
  };
}
