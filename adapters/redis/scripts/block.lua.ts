import { ENCODE, FRAME, GCRA, READ, WRITE } from './gcra.lua.js';

/**
 * `block`: a penalty, `lib/algorithms/gcra.ts` `gcraBlock` in Lua: each
 * bucket empty for its duration, one token back at its end; never earlier
 * than the bucket already is. Beside each bucket, its block mark (the value
 * the block wrote), so that a penalty for a retry near the end of a block
 * (`unlessBlocked`) leaves it as it is: the same rule as `MemoryStore.block`.
 */
export const BLOCK_LUA = `--[[
  block: keep each bucket empty for a duration from now.

  Input:
    KEYS[i]       bucket key i (i = 1..n)
    KEYS[n + i]   its block mark: the value the last block wrote to the bucket
    ARGV[1]   now: milliseconds in the caller's clock, or '' for Redis TIME
    ARGV[2]   padding: extra milliseconds of key lifetime beyond the TAT
    ARGV[3]   '1': unless blocked (a penalty for a denial), else '0'
    ARGV[4 + 3 (i - 1) ...]  per key: rate, burst, durationMs

  Per key: TAT = max(TAT, now + durationMs + (burst - 1) x interval), where a
  missing key or a TAT in the past is now; written with its expiry, and the
  value written kept in the mark, which expires when the block ends. Unless
  blocked: a bucket that still holds its mark's value (nothing wrote it since)
  and whose block has not ended (now < TAT - (burst - 1) x interval) is left
  as it is.

  Output: { 0, then per key: state, remaining, retryAfterMs, resetMs }: each
    bucket afterwards, as peek answers it.
]]
${FRAME}${READ}${WRITE}${GCRA}
local width = 4
local n = #KEYS / 2
local unless_blocked = ARGV[3] == '1'
local reply
if n > 0 then reply = { 0, false, false, false, false } else reply = { 0 } end
for i = 1, n do
  local a = 4 + 3 * (i - 1)
  local key = KEYS[i]
  local rate, burst, duration = tonumber(ARGV[a]), tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  local raw = redis.call('GET', key)
  local tat = read(raw)
  if tat == nil or tat < now then tat = now end
  local tail = (burst - 1) * (1000 / rate)
  local serving = false
  if unless_blocked and raw then
    serving = redis.call('GET', KEYS[n + i]) == raw and now < tat - tail
  end
  local blocked = now + duration + tail
  if not serving and blocked > tat then
    tat = blocked
    local written = write(key, tat)
    redis.call('SET', KEYS[n + i], written, 'PX', string.format('%.0f', math.ceil(duration)))
  end
  local k = width * (i - 1) + 1
  local _
  _, reply[k + 1], reply[k + 2], reply[k + 3], reply[k + 4] = consume(tat, rate, burst, 0)
end
${ENCODE}
return reply
`;
