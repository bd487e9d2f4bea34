import { ENCODE, FRAME, GCRA, READ, WRITE } from './gcra.lua.js';

/**
 * `settle`: a reservation's difference, `lib/algorithms/gcra.ts`
 * `gcraSettle` in Lua. One call per Cluster slot: the keys are in `KEYS`
 * (hash-tagged by the store, so a request's keys share a slot), and every
 * key's read and write happen in this one script, so two processes settling
 * the same bucket at once both count.
 */
export const SETTLE_LUA = `--[[
  settle: charge each bucket its delta (even past empty: debt) or give -delta back.

  Input:
    KEYS[i]   bucket key i (token buckets only)
    ARGV[1]   now: milliseconds in the caller's clock, or '' for Redis TIME
    ARGV[2]   padding: extra milliseconds of key lifetime beyond the TAT
    ARGV[3 + 3 (i - 1) ...]  per key: rate, burst, delta

  Per key: delta < 0: TAT += delta x interval, never below now (the key
  deleted when that is now: a full bucket), a missing key stays missing;
  delta > 0: TAT = max(TAT, now) + delta x interval (rounded up, as consume
  charges), with no ceiling: a TAT beyond now + burst x interval is a debt,
  which every later consume waits out. The key expires at its TAT, as always.

  Output: { 1, then per key: state, remaining, retryAfterMs, resetMs }: each
    bucket afterwards, as peek answers it.
]]
${FRAME}${READ}${WRITE}${GCRA}
local width = 4
local n = #KEYS
local reply
if n > 0 then reply = { 1, false, false, false, false } else reply = { 1 } end
for i = 1, n do
  local a = 3 + 3 * (i - 1)
  local key = KEYS[i]
  local rate, burst, delta = tonumber(ARGV[a]), tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  local tat = read(redis.call('GET', key))
  if delta < 0 then
    if tat ~= nil then
      tat = math.max(now, tat + delta * (1000 / rate))
      if tat > now then write(key, tat) else redis.call('DEL', key) end
    end
  elseif delta > 0 then
    if tat == nil or tat < now then tat = now end
    tat = charge(tat, delta * (1000 / rate))
    write(key, tat)
  end
  local k = width * (i - 1) + 1
  local _
  _, reply[k + 1], reply[k + 2], reply[k + 3], reply[k + 4] = consume(tat, rate, burst, 0)
end
${ENCODE}
return reply
`;
