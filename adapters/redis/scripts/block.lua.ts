import { ENCODE, FRAME, GCRA, READ, WRITE } from './gcra.lua.js';

/**
 * `block`: a penalty, `lib/algorithms/gcra.ts` `gcraBlock` in Lua: each
 * bucket empty for its duration, one token back at its end; never earlier
 * than the bucket already is.
 */
export const BLOCK_LUA = `--[[
  block: keep each bucket empty for a duration from now.

  Input:
    KEYS[i]   bucket key i
    ARGV[1]   now: milliseconds in the caller's clock, or '' for Redis TIME
    ARGV[2]   padding: extra milliseconds of key lifetime beyond the TAT
    ARGV[3 + 3 (i - 1) ...]  per key: rate, burst, durationMs

  Per key: TAT = max(TAT, now + durationMs + (burst - 1) x interval), where a
  missing key or a TAT in the past is now; written with its expiry.

  Output: { 0, then per key: state, remaining, retryAfterMs, resetMs }: each
    bucket afterwards, as peek answers it.
]]
${FRAME}${READ}${WRITE}${GCRA}
local width = 4
local n = #KEYS
local reply
if n > 0 then reply = { 0, false, false, false, false } else reply = { 0 } end
for i = 1, n do
  local a = 3 + 3 * (i - 1)
  local key = KEYS[i]
  local rate, burst, duration = tonumber(ARGV[a]), tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  local tat = read(redis.call('GET', key))
  if tat == nil or tat < now then tat = now end
  local blocked = now + duration + (burst - 1) * (1000 / rate)
  if blocked > tat then
    tat = blocked
    write(key, tat)
  end
  local k = width * (i - 1) + 1
  local _
  _, reply[k + 1], reply[k + 2], reply[k + 3], reply[k + 4] = consume(tat, rate, burst, 0)
end
${ENCODE}
return reply
`;
