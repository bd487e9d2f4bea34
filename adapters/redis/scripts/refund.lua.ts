import { ENCODE, FRAME, GCRA, READ, WRITE } from './gcra.lua.js';
import { EFFECTIVE, MARK_WINDOW, WINDOW_FLAG, WINDOW_FUNCTIONS } from './window.lua.js';

/**
 * `refund`: give tokens back. With a receipt (what `consume` or `lease`
 * answered when asked for receipts), the value found before is put back
 * exactly if the key still holds the value that charge wrote; otherwise, or
 * without a receipt, TAT -= cost x interval, never below now.
 */
export const REFUND_LUA = `--[[
  refund: give each bucket cost tokens back.

  Input:
    KEYS[i]   bucket key i
    ARGV[1]   now: milliseconds in the caller's clock, or '' for Redis TIME
    ARGV[2]   padding: extra milliseconds of key lifetime beyond the TAT
    ARGV[3 + 5 (i - 1) ...]  per key: rate, burst, cost, written, previous:
              the receipt of the charge given back (both '' without one,
              e.g. a lease's unspent tokens)

  Per key: if it still holds written (nobody charged it since), previous is
  put back exactly (the key deleted when previous is '' or already past);
  else, when it holds a value, TAT -= cost x interval, never below now (the
  key deleted when that is now: a full bucket). A missing key is a full
  bucket and stays so.

  Output: { 1, then per key: state, remaining, retryAfterMs, resetMs }: each
    bucket as it is afterwards, as peek answers it.
]]
${FRAME}${READ}${WRITE}${GCRA}${WINDOW_FLAG}
local width = 4
local n = #KEYS
-- Every value is read before any is written (as consume does).
local buckets = {}
for i = 1, n do
  local a = 3 + 5 * (i - 1)
  local key = KEYS[i]
  local raw = redis.call('GET', key)
  buckets[i] = {
    key = key, rate = tonumber(ARGV[a]), burst = tonumber(ARGV[a + 1]), cost = tonumber(ARGV[a + 2]),
    written = ARGV[a + 3], previous = ARGV[a + 4], raw = raw, tat = read(raw),
  }
  ${MARK_WINDOW}
end
${WINDOW_FUNCTIONS}

local reply
if n > 0 then reply = { 1, false, false, false, false } else reply = { 1 } end

-- A window key: with its receipt untouched, the value found before put
-- back exactly (if still alive); else its stored window's count less cost,
-- never below 0 (windowRefund). Fills the key's decision (a peek); returns
-- its effectiveWindowMs. (Made only in calls with a window key.)
local refund_window
if has_window then refund_window = function(b, k)
  local value = b.raw
  if b.raw == b.written then
    value = nil
    local st = window_parse(b.previous)
    if st ~= nil then
      st[5] = st[2]
      if string.sub(b.spec, 1, 1) == 's' then st[5] = st[2] + (st[2] - st[1]) end
      if (st[5] - frame) - now > 0 then value = window_write(b.key, st, b.previous) end
    end
    if value == nil then redis.call('DEL', b.key) end
  else
    local st = window_parse(b.raw)
    if st ~= nil then
      st[5] = st[2]
      if string.sub(b.spec, 1, 1) == 's' then st[5] = st[2] + (st[2] - st[1]) end
      st[3] = math.max(0, st[3] - b.cost)
      if (st[5] - frame) - now <= 0 or (st[3] <= TOKEN_EPSILON and st[4] <= TOKEN_EPSILON) then
        value = nil
        redis.call('DEL', b.key)
      else
        value = window_write(b.key, st)
      end
    end
  end
  local _, effective
  _, reply[k + 1], reply[k + 2], reply[k + 3], reply[k + 4], effective = window_decide(b.spec, b.burst, value, 0)
  return effective
end end

for i = 1, n do
  local b = buckets[i]
  local tat = b.tat
  if b.spec then
    b.effective = refund_window(b, width * (i - 1) + 1)
  elseif b.raw == b.written then
    -- Untouched since it was charged: put back exactly what was there.
    tat = read(b.previous)
    if tat ~= nil and tat > now then write(b.key, tat, b.previous) else redis.call('DEL', b.key) end
  elseif tat ~= nil then
    -- Charged again since: take back our cost only.
    tat = math.max(now, tat - b.cost * (1000 / b.rate))
    if tat > now then write(b.key, tat) else redis.call('DEL', b.key) end
  end
  if not b.spec then
    local k = width * (i - 1) + 1
    local _
    _, reply[k + 1], reply[k + 2], reply[k + 3], reply[k + 4] = consume(tat, b.rate, b.burst, 0)
  end
end
${ENCODE}
${EFFECTIVE}
return reply
`;
