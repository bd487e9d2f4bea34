// Where a fleet run's Redis calls go and where its under-admission comes
// from (issue 29, bench only): each TwoTierStore's calls to its RedisStore
// counted by kind and outcome, in the first second, after it, and at close;
// and the tokens it still held at close (what close() gave back).
//
// Kinds: `first` a first sighting (no lease asked; `first-join` when the
// fleet granted it a join), `join` a tracked key asking the fleet's join
// (its own demand not hot yet), `lease` a demand-sized lease, `plain` a
// tracked key asking no lease; each `:granted` (all asked), `:short` (some),
// `:denied`, or `:ok` (admitted, nothing asked); a pace asked (issue 29) adds
// `+pace` (granted), `+wait` (refused, with a wait) or `+none`, and a pace
// renewed on its own is `renew`; `release` a pace given back (at close);
// `give-back` refunds (in the run, or `close`), `other` anything else.

/** Wraps `store.redisStore` (the calls the store makes) with counters; answers a reader. */
export function countCalls(store, startAt) {
  const redis = store.redisStore;
  const counts = {};
  let closing = false;
  const bump = (kind) => {
    const t = Date.now() - startAt;
    const phase = closing ? 'close' : t < 1000 ? 'first second' : 'after';
    counts[kind] ??= { 'first second': 0, after: 0, close: 0 };
    counts[kind][phase]++;
  };
  const lease = redis.lease.bind(redis);
  redis.lease = (request, timeoutMs) => {
    const answer = lease(request, timeoutMs);
    const check = request.checks[0];
    const first = check?.joinCounts === false;
    const wanted = Math.max(check?.maxExtra ?? 0, check?.joinExtra ?? 0);
    const kind = first
      ? 'first'
      : (check?.joinExtra ?? 0) > (check?.maxExtra ?? 0)
        ? 'join'
        : wanted > 0
          ? 'lease'
          : 'plain';
    answer.then(
      (result) => {
        const extra = result.extras?.[0] ?? 0;
        const outcome = !result.allowed
          ? 'denied'
          : first
            ? extra > 0
              ? 'joined'
              : 'ok'
            : wanted === 0
              ? 'ok'
              : extra >= Math.min(wanted, check.maxExtra > 0 ? check.maxExtra : wanted)
                ? 'granted'
                : 'short';
        // A pace asked (issue 29): `renew` (a call of its own), else on the call's kind;
        // `+pace` granted, `+wait` refused with a wait, `+none` refused; `release` at close.
        const pace = check?.pace;
        if (pace === undefined) bump(`${kind}:${outcome}`);
        else if (pace.ask === 0) bump('release');
        else {
          const got = result.paces?.[0] > 0 ? 'pace' : result.paceMs?.[0] > 0 ? 'wait' : 'none';
          bump(`${check.cost === 0 ? 'renew' : `${kind}:${outcome}`}+${got}`);
        }
      },
      () => bump(`${kind}:error`),
    );
    return answer;
  };
  const consume = redis.consume.bind(redis);
  redis.consume = (request) => {
    const answer = consume(request);
    answer.then(
      (result) => bump(`first:${result.allowed ? 'ok' : 'denied'}`),
      () => bump('first:error'),
    );
    return answer;
  };
  const refund = redis.refund.bind(redis);
  redis.refund = (request) => {
    bump('give-back');
    return refund(request);
  };
  for (const name of ['peek', 'settle', 'block', 'reset']) {
    const original = redis[name].bind(redis);
    redis[name] = (...args) => {
      bump('other');
      return original(...args);
    };
  }
  return {
    closing: () => (closing = true),
    counts: () => counts,
  };
}

/**
 * The bucket's tokens at `atMs` (epoch ms) from its raw value (`<base>:<offset>`:
 * its TAT is base + offset, epoch ms with `time: 'client'`); `burst` when missing.
 */
export function tokensOf(raw, atMs, rate, burst) {
  if (raw === null || raw === undefined) return burst;
  const [base, offset] = String(raw).split(':').map(Number);
  const tat = base + offset;
  const intervalMs = 1000 / rate;
  return Math.max(0, Math.min(burst, burst - (tat - atMs) / intervalMs));
}

/** Sums the workers' call counts: kind -> phase -> calls. */
export function sumCounts(all) {
  const total = {};
  for (const counts of all)
    for (const [kind, phases] of Object.entries(counts ?? {})) {
      total[kind] ??= { 'first second': 0, after: 0, close: 0 };
      for (const [phase, n] of Object.entries(phases)) total[kind][phase] += n;
    }
  return total;
}
