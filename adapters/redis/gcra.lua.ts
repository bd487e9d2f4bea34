/**
 * GCRA over a list of buckets, in one Lua script (Redis 3.2+, Lua 5.1).
 *
 * The arithmetic is `lib/algorithms/gcra.ts` line for line: same tolerance,
 * same handling of past and far-future TATs, same rounding up of the charge,
 * same `remaining` / `retryAfterMs` / `resetMs`. Lua numbers are IEEE doubles
 * like JavaScript's, and `+ - * /`, `math.floor`, `math.min`/`max` round the
 * same way; the scenario table (`redis.lua-scenarios.spec.ts`) and the store
 * contract check that both agree. (`ulp` uses `math.frexp`, which is exact.)
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
 * for `l`: `rate, burst, cost, maxExtra` per key)
 * - `op`: `c` consume (all or nothing), `e` evaluate (decide as `c` would for
 *   a request denied elsewhere: never writes), `p` peek (cost 0, no write),
 *   `r` refund: give back what an earlier `c` took. If the key still holds
 *   the value that `c` wrote, the value found before is put back exactly;
 *   if someone charged it since, TAT -= cost * interval, never below now.
 *   Answers like `p`. With an empty `written`, only the second rule applies
 *   (how a lease's unspent tokens are given back).
 *   `l` lease: `c`, and when the request is admitted, each key additionally
 *   gives up to `maxExtra` whole tokens, as many as its bucket holds after
 *   the cost (the extras never decide the admission). The decisions are the
 *   ones `c` would answer (the bucket after the cost, before the extras); the
 *   reply ends with one more field per key, the extras granted; `written` is
 *   the value stored, extras included.
 * - `now`: milliseconds in the caller's clock, or empty to read `TIME`.
 * - `padding`: extra milliseconds of key lifetime beyond the TAT (0 = expire
 *   exactly when the bucket is full again).
 *
 * Numbers travel as strings both ways: Redis truncates Lua numbers to
 * integers in replies, and `tostring` keeps only 14 digits, so values are
 * written with `%.17g` (exact round trip for doubles) and infinity as `inf`.
 *
 * Reply: `{ allowed, then per key: allowed, remaining, retryAfterMs, resetMs,
 * reason, previous, written }` (for `l`, then one `extras` per key) with `allowed` as `1`/`0`, `reason` empty on
 * admissions, `previous` the stored value found and `written` the value `c`
 * stored (empty when none): the receipt a refund needs.
 *
 * Expiry: every written key expires when its bucket is full again (its TAT),
 * so a missing key and a full bucket are the same thing. With server time the
 * expiry is absolute, `PEXPIREAT frame + ceil(tat)` (exact: both integers);
 * with client time it is relative, `PX ceil(tat - now)`, since Redis' clock
 * and the caller's need not agree on the epoch.
 */
export const GCRA_LUA = `
if redis.replicate_commands then redis.replicate_commands() end
local TOKEN_EPSILON = 1e-9
local DOUBLE_EPSILON = 2.220446049250313e-16
local INF = math.huge

local op = ARGV[1]
local client_time = ARGV[2] ~= ''
local padding = tonumber(ARGV[3])
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

local function fmt(x)
  if x == INF then return 'inf' end
  return string.format('%.17g', x)
end

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
local function write(key, tat, raw)
  local value = raw or (fmt(frame) .. ':' .. fmt(tat))
  if client_time then
    local px = math.ceil(tat - now + padding)
    if px > 0 then redis.call('SET', key, value, 'PX', px) else redis.call('DEL', key) end
  else
    redis.call('SET', key, value)
    redis.call('PEXPIREAT', key, frame + math.ceil(tat + padding))
  end
  return value
end

local function whole_tokens(free_ms, interval, slack)
  return math.max(0, math.floor((free_ms + slack) / interval))
end

local function tolerance(interval)
  return TOKEN_EPSILON * interval + math.abs(now) * DOUBLE_EPSILON * 2
end

local function denied(current, interval, capacity, retry_after, reason, slack)
  local debt = current - now
  return { false, whole_tokens(capacity - debt, interval, slack), retry_after, math.max(0, debt), reason }
end

-- Distance from x to the next larger double (exact, through frexp).
local function ulp(x)
  if x == 0 then return 2 ^ -1074 end
  local _, e = math.frexp(math.abs(x))
  return math.ldexp(1, e - 53)
end

-- from + step, rounded up so that the bucket is never charged less than step.
local function charge(from, step)
  local nxt = from + step
  while nxt - from < step do nxt = nxt + ulp(nxt) end
  return nxt
end

-- gcraConsume: returns the new TAT (nil when unchanged) and the decision.
local function consume(tat, rate, burst, cost)
  local interval = 1000 / rate
  local capacity = burst * interval
  local current
  if tat == nil or tat < now then current = now else current = tat end
  if cost > burst + TOKEN_EPSILON then
    return nil, denied(current, interval, capacity, INF, 'cost-exceeds-burst', tolerance(interval))
  end
  local nxt = charge(current, cost * interval)
  local debt = nxt - now
  local slack = tolerance(interval)
  if debt <= capacity + slack then
    return nxt, { true, whole_tokens(capacity - debt, interval, slack), 0, math.min(capacity, math.max(0, debt)), '' }
  end
  return nil, denied(current, interval, capacity, debt - capacity, 'limit', slack)
end

-- lease: up to max_extra whole tokens more from a bucket already charged to tat.
local function extras(tat, rate, burst, max_extra)
  local interval = 1000 / rate
  local capacity = burst * interval
  local slack = tolerance(interval)
  local extra = math.min(max_extra, whole_tokens(capacity - (tat - now), interval, slack))
  -- The rounded-up charge may cost a hair more than whole_tokens assumed.
  while extra > 0 and charge(tat, extra * interval) - now > capacity + slack do extra = extra - 1 end
  if extra <= 0 then return tat, 0 end
  return charge(tat, extra * interval), extra
end

local n = #KEYS
local stride = 3
if op == 'r' then stride = 5 elseif op == 'l' then stride = 4 end
local raws, tats = {}, {}
local rates, bursts, costs, max_extras, granted = {}, {}, {}, {}, {}
for i = 1, n do
  local base = 4 + stride * (i - 1)
  rates[i] = tonumber(ARGV[base])
  bursts[i] = tonumber(ARGV[base + 1])
  costs[i] = tonumber(ARGV[base + 2])
  granted[i] = 0
  if op == 'l' then max_extras[i] = math.max(0, math.floor(tonumber(ARGV[base + 3]))) end
  raws[i] = redis.call('GET', KEYS[i])
  tats[i] = read(raws[i])
end

local decisions, written = {}, {}
local allowed = true
if op == 'r' then
  for i = 1, n do
    local base = 4 + stride * (i - 1)
    if raws[i] == ARGV[base + 3] then
      -- Untouched since it was charged: put back exactly what was there.
      local previous = ARGV[base + 4]
      local tat = read(previous)
      if tat ~= nil and tat > now then write(KEYS[i], tat, previous) else redis.call('DEL', KEYS[i]) end
      tats[i] = tat
    elseif tats[i] ~= nil then
      -- Charged again since: take back our cost only.
      local refunded = math.max(now, tats[i] - costs[i] * (1000 / rates[i]))
      if refunded > now then write(KEYS[i], refunded) else redis.call('DEL', KEYS[i]) end
      tats[i] = refunded
    end
    local _, d = consume(tats[i], rates[i], bursts[i], 0)
    decisions[i] = d
  end
else
  local next_tats = {}
  for i = 1, n do
    local cost = costs[i]
    if op == 'p' then cost = 0 end
    next_tats[i], decisions[i] = consume(tats[i], rates[i], bursts[i], cost)
    allowed = allowed and decisions[i][1]
  end
  if allowed and (op == 'c' or op == 'l') then
    for i = 1, n do
      local tat = next_tats[i]
      if op == 'l' and max_extras[i] > 0 then tat, granted[i] = extras(tat, rates[i], bursts[i], max_extras[i]) end
      written[i] = write(KEYS[i], tat)
    end
  elseif op == 'e' or not allowed then
    -- Denied as a whole ('e' is only asked for a request another slot
    -- denied): nothing was charged, so admitting checks report their bucket
    -- as it stands.
    for i = 1, n do
      if decisions[i][1] then
        local _, d = consume(tats[i], rates[i], bursts[i], 0)
        decisions[i] = d
      end
    end
  end
end

-- Per key: allowed, remaining, retryAfterMs, resetMs, reason, then the
-- receipt a refund needs: the value found and the value written ('' = none).
local reply = { allowed and '1' or '0' }
for i = 1, n do
  local d = decisions[i]
  local k = 7 * (i - 1) + 1
  reply[k + 1] = d[1] and '1' or '0'
  reply[k + 2] = fmt(d[2])
  reply[k + 3] = fmt(d[3])
  reply[k + 4] = fmt(d[4])
  reply[k + 5] = d[5]
  reply[k + 6] = raws[i] or ''
  reply[k + 7] = written[i] or ''
end
if op == 'l' then
  for i = 1, n do reply[1 + 7 * n + i] = fmt(granted[i]) end
end
return reply
`;
