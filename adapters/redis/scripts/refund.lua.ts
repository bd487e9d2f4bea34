import { ENCODE, FRAME, GCRA, READ, WRITE } from './gcra.lua.js';

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
${FRAME}${READ}${WRITE}${GCRA}
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
end

local reply
if n > 0 then reply = { 1, false, false, false, false } else reply = { 1 } end
for i = 1, n do
  local b = buckets[i]
  local tat = b.tat
  if b.raw == b.written then
    -- Untouched since it was charged: put back exactly what was there.
    tat = read(b.previous)
    if tat ~= nil and tat > now then write(b.key, tat, b.previous) else redis.call('DEL', b.key) end
  elseif tat ~= nil then
    -- Charged again since: take back our cost only.
    tat = math.max(now, tat - b.cost * (1000 / b.rate))
    if tat > now then write(b.key, tat) else redis.call('DEL', b.key) end
  end
  local k = width * (i - 1) + 1
  local _
  _, reply[k + 1], reply[k + 2], reply[k + 3], reply[k + 4] = consume(tat, b.rate, b.burst, 0)
end
${ENCODE}
return reply
`;
