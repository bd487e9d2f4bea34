/**
 * GCRA over a list of buckets, in one Lua script (Redis 3.2+, Lua 5.1).
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
 * to rounding at ordinary ones. So the script never computes in absolute
 * time. It works in the frame of `floor(now)`: `now` becomes a fraction in
 * [0, 1), and a stored TAT is kept as `<base>:<offset>`, an integer base
 * (the frame it was written in) plus an offset, which read in the current
 * frame is `(base - frame) + offset`: an exact integer difference plus a
 * small number. Precision is then the same at any epoch, in both time modes,
 * and processes need not agree on anything but the clock itself.
 *
 * Calling convention: `KEYS` = bucket keys; `ARGV` =
 * `op, now, padding, rate1, burst1, cost1, rate2, ...`
 * (for `r`: `rate, burst, cost, written, previous` per key;
 * for `l` and `L`: `rate, burst, cost, maxExtra` per key)
 * - `op`: `c` consume (all or nothing), `e` evaluate (decide as `c` would for
 *   a request denied elsewhere: never writes), `p` peek (cost 0, no write),
 *   `r` refund: give back what an earlier `C` took. If the key still holds
 *   the value that `C` wrote, the value found before is put back exactly;
 *   if someone charged it since, TAT -= cost * interval, never below now.
 *   Answers like `p`. With an empty `written`, only the second rule applies
 *   (how a lease's unspent tokens are given back).
 *   `l` lease: `c`, and when the request is admitted, each key additionally
 *   gives up to `maxExtra` whole tokens, as many as its bucket holds after
 *   the cost (the extras never decide the admission). The decisions are the
 *   ones `c` would answer (the bucket after the cost, before the extras); the
 *   reply ends with one more field per key, the extras granted; `written` is
 *   the value stored, extras included.
 *   `C` and `L`: `c` and `l` that also answer each key's receipt (below),
 *   for callers that may have to refund (the Cluster slot-by-slot path);
 *   plain `c` and `l` leave it out of the reply.
 * - `now`: milliseconds in the caller's clock, or empty to read `TIME`.
 * - `padding`: extra milliseconds of key lifetime beyond the TAT (0 = expire
 *   exactly when the bucket is full again).
 *
 * Numbers. Arguments are text. In the reply, a number that is an integer of
 * magnitude at most 2^53 goes out as an integer reply (exact; Redis would
 * truncate any other Lua number to an integer), anything else as text:
 * `%.17g` (exact round trip for doubles; `tostring` keeps only 14 digits),
 * infinity as `inf`. Stored values are text too, `<base>:<offset>`, both
 * written with `%.17g` in one `string.format` (the offset `inf` when
 * infinite). Expiry times are integers handed to Redis as Lua numbers, which
 * it writes with `%.17g` itself. (Not `%d`: Lua 5.1 formats it through a C
 * `long`, 32 bits on Windows builds, too small for epoch milliseconds.)
 *
 * Reply: `{ allowed, then per key: state, remaining, retryAfterMs, resetMs
 * [, previous, written] }` (for `l` and `L`, then one `extras` per key):
 * `allowed` is `1`/`0`; `state` is `1` admitted, `0` denied by the limit
 * (reason `limit`), `2` denied because the cost exceeds the burst (reason
 * `cost-exceeds-burst`). For `C` and `L` only, each key's receipt follows:
 * `previous` the stored value found and `written` the value stored (empty
 * when none), which is what a refund (`r`) needs.
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
 * 3.2 to 4.x need `redis.replicate_commands()`, so the script calls it on
 * servers older than 7.0 only (on 5.x and 6.x it is a harmless no-op).
 */
export const GCRA_LUA = `
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

local op = ARGV[1]
-- 'C' and 'L': 'c' and 'l' that also answer the receipts a refund needs.
local receipts = op == 'C' or op == 'L'
if op == 'C' then op = 'c' elseif op == 'L' then op = 'l' end
local client_time = ARGV[2] ~= ''
local padding = 0
if ARGV[3] ~= '0' then padding = tonumber(ARGV[3]) end
-- frame: integer milliseconds; now: the fraction of a millisecond past it.
local frame, now
if client_time then
  local absolute = tonumber(ARGV[2])
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

-- Stores a TAT of the current frame (raw: an exact value to put back instead).
-- Expiry times go to Redis as Lua numbers (integers), which it writes with
-- '%.17g' itself, exactly.
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
    if px > 0 then redis.call('SET', key, value, 'PX', px) else redis.call('DEL', key) end
  elseif modern then
    redis.call('SET', key, value, 'PXAT', frame + math.ceil(tat + padding))
  else
    redis.call('SET', key, value)
    redis.call('PEXPIREAT', key, frame + math.ceil(tat + padding))
  end
  return value
end

local function whole_tokens(free_ms, interval, slack)
  return math.max(0, math.floor((free_ms + slack) / interval))
end

-- from + step, rounded up so that the bucket is never charged less than step
-- (in steps of one ulp, the distance to the next larger double, via frexp).
local function charge(from, step)
  local nxt = from + step
  while nxt - from < step do
    if nxt == 0 then
      nxt = 2 ^ -1074
    else
      local _, e = math.frexp(math.abs(nxt))
      nxt = nxt + math.ldexp(1, e - 53)
    end
  end
  return nxt
end

-- gcraConsume: returns the new TAT (nil when unchanged), then the decision:
-- state (1 admitted, 0 denied by the limit, 2 denied: cost exceeds burst),
-- remaining, retryAfterMs, resetMs.
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
      return nxt, 1, whole_tokens(capacity - debt, interval, slack), 0, math.min(capacity, math.max(0, debt))
    end
    state, retry_after = 0, debt - capacity
  end
  -- Denied: the bucket as it stands.
  local debt = current - now
  return nil, state, whole_tokens(capacity - debt, interval, slack), retry_after, math.max(0, debt)
end

-- lease: up to max_extra whole tokens more from a bucket already charged to tat.
local extras
if op == 'l' then
  function extras(tat, rate, burst, max_extra)
    local interval = 1000 / rate
    local capacity = burst * interval
    local slack = TOKEN_EPSILON * interval + now_slack
    local extra = math.min(max_extra, whole_tokens(capacity - (tat - now), interval, slack))
    -- The rounded-up charge may cost a hair more than whole_tokens assumed.
    while extra > 0 and charge(tat, extra * interval) - now > capacity + slack do extra = extra - 1 end
    if extra <= 0 then return tat, 0 end
    return charge(tat, extra * interval), extra
  end
end

local n = #KEYS
local stride = 3
if op == 'r' then stride = 5 elseif op == 'l' then stride = 4 end
-- Per key: rate, burst, cost, value found, its TAT, TAT to write, extras
-- asked (lease), extras granted.
local buckets = {}
for i = 1, n do
  local base = 4 + stride * (i - 1)
  local max_extra = 0
  if op == 'l' then max_extra = math.max(0, math.floor(tonumber(ARGV[base + 3]))) end
  local raw = redis.call('GET', KEYS[i])
  buckets[i] = { tonumber(ARGV[base]), tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2]), raw, read(raw), false, max_extra, 0 }
end

-- The reply (see the header); decisions go in as numbers, and are turned
-- into reply values at the end. Created with room for one key's decision,
-- the common case, so that filling it does not grow it step by step (every
-- placeholder is overwritten).
local width = 4
if receipts then width = 6 end
local reply
if n > 0 then reply = { 1, false, false, false, false } else reply = { 1 } end
local allowed = true
if op == 'r' then
  for i = 1, n do
    local b = buckets[i]
    local base = 4 + stride * (i - 1)
    if b[4] == ARGV[base + 3] then
      -- Untouched since it was charged: put back exactly what was there.
      local previous = ARGV[base + 4]
      local tat = read(previous)
      if tat ~= nil and tat > now then write(KEYS[i], tat, previous) else redis.call('DEL', KEYS[i]) end
      b[5] = tat
    elseif b[5] ~= nil then
      -- Charged again since: take back our cost only.
      local refunded = math.max(now, b[5] - b[3] * (1000 / b[1]))
      if refunded > now then write(KEYS[i], refunded) else redis.call('DEL', KEYS[i]) end
      b[5] = refunded
    end
    local k = width * (i - 1) + 1
    local _
    _, reply[k + 1], reply[k + 2], reply[k + 3], reply[k + 4] = consume(b[5], b[1], b[2], 0)
  end
else
  for i = 1, n do
    local b = buckets[i]
    local cost = b[3]
    if op == 'p' then cost = 0 end
    local k = width * (i - 1) + 1
    b[6], reply[k + 1], reply[k + 2], reply[k + 3], reply[k + 4] = consume(b[5], b[1], b[2], cost)
    allowed = allowed and reply[k + 1] == 1
  end
  if allowed and (op == 'c' or op == 'l') then
    for i = 1, n do
      local b = buckets[i]
      local tat = b[6]
      if op == 'l' and b[7] > 0 then tat, b[8] = extras(tat, b[1], b[2], b[7]) end
      local written = write(KEYS[i], tat)
      if receipts then reply[width * i + 1] = written end
    end
  elseif op == 'e' or not allowed then
    -- Denied as a whole ('e' is only asked for a request another slot
    -- denied): nothing was charged, so admitting checks report their bucket
    -- as it stands.
    for i = 1, n do
      local k = width * (i - 1) + 1
      if reply[k + 1] == 1 then
        local b = buckets[i]
        local _
        _, reply[k + 1], reply[k + 2], reply[k + 3], reply[k + 4] = consume(b[5], b[1], b[2], 0)
      end
    end
  end
end

if not allowed then reply[1] = 0 end
-- Numbers go out as integer replies when exact, else as text ('inf' or '%.17g').
local function num(x)
  if x % 1 == 0 and x <= EXACT and x >= -EXACT then return x end
  if x == INF then return 'inf' end
  return string.format('%.17g', x)
end
for i = 1, n do
  local k = width * (i - 1) + 1
  reply[k + 2] = num(reply[k + 2])
  reply[k + 3] = num(reply[k + 3])
  reply[k + 4] = num(reply[k + 4])
  if receipts then
    reply[k + 5] = buckets[i][4] or ''
    reply[k + 6] = reply[k + 6] or ''
  end
end
if op == 'l' then
  for i = 1, n do reply[1 + width * n + i] = num(buckets[i][8]) end
end
return reply
`;
