/**
 * The GCRA library every script includes (Redis 3.2+, Lua 5.1), bullmq
 * style: each script is its own text (`consume.lua.ts`, `evaluate.lua.ts`,
 * `peek.lua.ts`, `refund.lua.ts`, `lease.lua.ts`), made at load time by
 * concatenating the fragments below with the operation's own code.
 *
 * Two kinds of fragments. Functions ({@link FRAME} first, then
 * {@link READ}, {@link WRITE} for scripts that write, {@link GCRA},
 * {@link EXTRAS} for the lease) define chunk-level locals. Blocks
 * ({@link DECIDE}, {@link RESTATE}, {@link ENCODE}, {@link RECEIPTS}) are
 * statements that work on the including script's variables, which each
 * block names: the loops over a call's buckets that consume, evaluate and
 * lease share. Why blocks and not functions: a script's functions are
 * created anew on every call (a closure each, plus one upvalue per local it
 * captures), about a thousand Redis instructions apiece (callgrind); the
 * library keeps to the functions the arithmetic needs.
 *
 * The arithmetic is `lib/algorithms/gcra.ts` operation for operation: same
 * tolerance, same handling of past and far-future TATs, same rounding up of
 * the charge, same `remaining` / `retryAfterMs` / `resetMs`. Lua numbers are
 * IEEE doubles like JavaScript's, and `+ - * /`, `math.floor`,
 * `math.min`/`max` round the same way; the scenario table
 * (`redis.lua-scenarios.spec.ts`) and the store contract check that both
 * agree. (The ulp step of `charge` uses `math.frexp`, which is exact; the
 * part of the tolerance that depends on `now` is computed once per call, the
 * same double every time.)
 *
 * Time frame. At `Date.now()` magnitudes (~1.7e12 ms) doubles are 2^-12 ms
 * apart: coarser than a token at very high rates, and enough to lose a token
 * to rounding at ordinary ones. So the scripts never compute in absolute
 * time. They work in the frame of `floor(now)`: `now` becomes a fraction in
 * [0, 1), and a stored TAT is kept as `<base>:<offset>`, an integer base
 * (the frame it was written in) plus an offset, which read in the current
 * frame is `(base - frame) + offset`: an exact integer difference plus a
 * small number. Precision is then the same at any epoch, in both time modes,
 * and processes need not agree on anything but the clock itself.
 *
 * Arguments common to every script: `ARGV[1]` is `now`, milliseconds in the
 * caller's clock, or empty to read Redis `TIME`; scripts that write take
 * `ARGV[2]`, the padding: extra milliseconds of key lifetime beyond the TAT
 * (0 = expire exactly when the bucket is full again). `KEYS` are the bucket
 * keys, one per check, all in one Cluster slot.
 *
 * Numbers. Arguments are text. In the reply, a number that is an integer of
 * magnitude at most 2^53 goes out as an integer reply (exact; Redis would
 * truncate any other Lua number to an integer), anything else as text:
 * `%.17g` (exact round trip for doubles; `tostring` keeps only 14 digits),
 * infinity as `inf`. Stored values are text too, `<base>:<offset>`, both
 * written with `%.17g` in one `string.format` (the offset `inf` when
 * infinite). Expiry times are integers written with `%.0f`: never an
 * exponent, which Redis refuses (handed over as Lua numbers, Redis would write
 * them with `%.17g`, `1e+17` from 10^17 ms on). (Not `%d`: Lua 5.1 formats it
 * through a C `long`, 32 bits on Windows builds, too small for epoch
 * milliseconds.) Limits keep horizons within `MAX_HORIZON_MS` (1e14 ms,
 * `lib/limits/resolve-bucket.ts`), where every expiry is an exact integer.
 *
 * Decisions in the reply: `{ allowed, then per key: state, remaining,
 * retryAfterMs, resetMs [, previous, written] }`, `allowed` `1`/`0`, `state`
 * `1` admitted, `0` denied by the limit (reason `limit`), `2` denied because
 * the cost exceeds the burst (reason `cost-exceeds-burst`). The receipt
 * (`previous`: the stored value found, `written`: the value stored, empty
 * when none) follows only where a script says so: it is what a refund needs.
 *
 * Expiry: every written key expires when its bucket is full again (its TAT),
 * so a missing key and a full bucket are the same thing. With server time the
 * expiry is absolute, at `frame + ceil(tat)` (exact: both integers), set in
 * the same command as the value, `SET ... PXAT`, on Redis 7.0 and later; on
 * older servers (detected inside the script: `redis.REDIS_VERSION_NUM` only
 * exists from 7.0 on, and PXAT from 6.2) it takes `SET` then `PEXPIREAT`,
 * same expiry. With client time it is relative, `SET ... PX ceil(tat - now)`,
 * since Redis' clock and the caller's need not agree on the epoch.
 *
 * Replication: scripts must replicate their effects (they read `TIME`).
 * That is the only mode from Redis 7.0 on and the default from 5.0; Redis
 * 3.2 to 4.x need `redis.replicate_commands()`, so the scripts call it on
 * servers older than 7.0 only (on 5.x and 6.x it is a harmless no-op).
 */

/**
 * Constants, server detection, and the time frame of the call: `frame`
 * (integer milliseconds) and `now` (the fraction of a millisecond past it),
 * from `ARGV[1]` or `TIME`.
 */
export const FRAME = `
local TOKEN_EPSILON = 1e-9
local DOUBLE_EPSILON = 2.220446049250313e-16
local INF = math.huge
-- 2^53: integers up to it are exact as doubles and as integer replies.
local EXACT = 9007199254740992

-- REDIS_VERSION_NUM appeared in Redis 7.0, which only replicates effects and
-- has SET ... PXAT (6.2+). Before 5.0, effects replication must be asked for
-- (TIME before a write); 5.x and 6.x take the call as the no-op it is there.
local modern = redis.REDIS_VERSION_NUM ~= nil
if not modern and redis.replicate_commands then redis.replicate_commands() end

local client_time = ARGV[1] ~= ''
-- frame: integer milliseconds; now: the fraction of a millisecond past it.
local frame, now
if client_time then
  local absolute = tonumber(ARGV[1])
  frame = math.floor(absolute)
  now = absolute - frame
else
  local t = redis.call('TIME')
  local micros = tonumber(t[2])
  frame = tonumber(t[1]) * 1000 + math.floor(micros / 1000)
  now = (micros % 1000) / 1000
end
-- The part of the tolerance that depends on now (tolerance(interval) below).
local now_slack = math.abs(now) * DOUBLE_EPSILON * 2
`;

/** `read(raw)`: a stored value (`GET`'s answer) as a TAT of this frame. */
export const READ = `
-- A stored value, as a TAT in the current frame (nil: no usable value).
local function read(raw)
  if not raw then return nil end
  local sep = string.find(raw, ':', 1, true)
  if not sep then return nil end
  local base = tonumber(string.sub(raw, 1, sep - 1))
  local offset = tonumber(string.sub(raw, sep + 1))
  if base == nil or offset == nil then return nil end
  return (base - frame) + offset
end
`;

/** `write(key, tat, raw)`: value and expiry (see the file comment); the padding is `ARGV[2]`. */
export const WRITE = `
local padding = 0
if ARGV[2] ~= '0' then padding = tonumber(ARGV[2]) end

-- Stores a TAT of the current frame (raw: an exact value to put back instead).
-- Expiry times are integers written with '%.0f': never an exponent (Redis
-- writes a Lua number with '%.17g', 1e+17 from 10^17 on, which SET and
-- PEXPIREAT refuse), exact up to 2^53.
local function write(key, tat, raw)
  local value = raw
  if not value then
    if tat == INF then
      value = string.format('%.17g:inf', frame)
    else
      value = string.format('%.17g:%.17g', frame, tat)
    end
  end
  if client_time then
    local px = math.ceil(tat - now + padding)
    if px > 0 then redis.call('SET', key, value, 'PX', string.format('%.0f', px)) else redis.call('DEL', key) end
  elseif modern then
    redis.call('SET', key, value, 'PXAT', string.format('%.0f', frame + math.ceil(tat + padding)))
  else
    redis.call('SET', key, value)
    redis.call('PEXPIREAT', key, string.format('%.0f', frame + math.ceil(tat + padding)))
  end
  return value
end
`;

/**
 * Lua statements: `out` (a declared local) = `from + step`, rounded up so
 * that the bucket is never charged less than `step`, in steps of one ulp (the
 * distance to the next larger double, via frexp). Shared by the library's
 * `charge` and the scripts that inline it (`consume-one.lua.ts`).
 */
export function chargeStatements(from: string, step: string, out: string): string {
  return `${out} = ${from} + ${step}
  while ${out} - ${from} < ${step} do
    if ${out} == 0 then
      ${out} = 2 ^ -1074
    else
      local _, e = math.frexp(math.abs(${out}))
      ${out} = ${out} + math.ldexp(1, e - 53)
    end
  end`;
}

/**
 * `lib/algorithms/gcra.ts` in Lua: `charge` and `consume` (gcraConsume;
 * `wholeTokens` is written out where it is used,
 * `math.max(0, math.floor((free_ms + slack) / interval))`).
 */
export const GCRA = `
-- from + step, rounded up so that the bucket is never charged less than step
-- (in steps of one ulp, the distance to the next larger double, via frexp).
local function charge(from, step)
  local nxt
  ${chargeStatements('from', 'step', 'nxt')}
  return nxt
end

-- gcraConsume: returns the new TAT (nil when unchanged), then the decision:
-- state (1 admitted, 0 denied by the limit, 2 denied: cost exceeds burst),
-- remaining, retryAfterMs, resetMs. (remaining: whole tokens in the room
-- left, math.max(0, math.floor((free_ms + slack) / interval)).)
local function consume(tat, rate, burst, cost)
  local interval = 1000 / rate
  local capacity = burst * interval
  local slack = TOKEN_EPSILON * interval + now_slack
  local current
  if tat == nil or tat < now then current = now else current = tat end
  local state, retry_after
  if cost > burst + TOKEN_EPSILON then
    state, retry_after = 2, INF
  else
    local nxt = charge(current, cost * interval)
    local debt = nxt - now
    if debt <= capacity + slack then
      return nxt, 1, math.max(0, math.floor((capacity - debt + slack) / interval)), 0, math.min(capacity, math.max(0, debt))
    end
    state, retry_after = 0, debt - capacity
  end
  -- Denied: the bucket as it stands.
  local debt = current - now
  return nil, state, math.max(0, math.floor((capacity - debt + slack) / interval)), retry_after, math.max(0, debt)
end
`;

/** `extras(tat, rate, burst, max_extra)`: the whole tokens a lease takes beyond the cost. */
export const EXTRAS = `
-- Up to max_extra whole tokens more from a bucket already charged to tat:
-- the TAT with them taken, and how many.
local function extras(tat, rate, burst, max_extra)
  local interval = 1000 / rate
  local capacity = burst * interval
  local slack = TOKEN_EPSILON * interval + now_slack
  local extra = math.min(max_extra, math.max(0, math.floor((capacity - (tat - now) + slack) / interval)))
  -- The rounded-up charge may cost a hair more than the whole tokens assumed.
  while extra > 0 and charge(tat, extra * interval) - now > capacity + slack do extra = extra - 1 end
  if extra <= 0 then return tat, 0 end
  return charge(tat, extra * interval), extra
end
`;

/**
 * Block: each bucket's decision for its cost, all or nothing. Works on
 * `buckets` (n tables with `rate`, `burst`, `cost`, `tat`; sets `charged`,
 * the TAT to write if the request is admitted) and `reply` (`width` fields
 * per key from `reply[2]`: state, remaining, retryAfterMs, resetMs as
 * numbers); defines `allowed`, true when every bucket admits.
 */
export const DECIDE = `
local allowed = true
for i = 1, n do
  local b = buckets[i]
  local k = width * (i - 1) + 1
  b.charged, reply[k + 1], reply[k + 2], reply[k + 3], reply[k + 4] = consume(b.tat, b.rate, b.burst, b.cost)
  allowed = allowed and reply[k + 1] == 1
end
`;

/**
 * Block, for a request denied as a whole: nothing was charged, so buckets
 * that admitted report themselves as they stand (cost 0). Works on
 * `buckets`, `reply`, `n`, `width` as {@link DECIDE} left them.
 */
export const RESTATE = `
for i = 1, n do
  local k = width * (i - 1) + 1
  if reply[k + 1] == 1 then
    local b = buckets[i]
    local _
    _, reply[k + 1], reply[k + 2], reply[k + 3], reply[k + 4] = consume(b.tat, b.rate, b.burst, 0)
  end
end
`;

/**
 * Lua statement: the number in local `x` written to `slot` as a reply value:
 * left as it is when an exact integer (an integer reply), else text (`inf`,
 * or `%.17g`). (A script's function would be a closure made on every call.)
 */
export function replyNumber(x: string, slot: string): string {
  return `if ${x} % 1 ~= 0 or ${x} > EXACT or ${x} < -EXACT then
      if ${x} == INF then ${slot} = 'inf' else ${slot} = string.format('%.17g', ${x}) end
    end`;
}

/**
 * Block: the decisions' numbers (`n` keys of `width` fields in `reply`)
 * turned into reply values ({@link replyNumber}). Scripts create the reply
 * as `{ 1, false, false, false, false }` when n > 0: room for one key's
 * decision, the common case, so that filling it does not grow it step by
 * step (every placeholder is overwritten).
 */
export const ENCODE = `
for i = 1, n do
  local k = width * (i - 1) + 1
  for j = k + 2, k + 4 do
    local x = reply[j]
    ${replyNumber('x', 'reply[j]')}
  end
end
`;

/**
 * Block: each bucket's receipt into a reply of width 6: `raw` (the value it
 * held) and `written` (the value stored), `''` for none. Works on `buckets`,
 * `reply`, `n`.
 */
export const RECEIPTS = `
for i = 1, n do
  local b = buckets[i]
  reply[6 * i] = b.raw or ''
  reply[6 * i + 1] = b.written or ''
end
`;
