import { ENCODE, FRAME, GCRA, READ } from './gcra.lua.js';
import { EFFECTIVE, windowLibrary } from './window.lua.js';

/** `peek`: each bucket as it stands (the decision of a cost of 0). Never writes. */
export const PEEK_LUA = `--[[
  peek: each bucket as it stands, without charging it.

  Input:
    KEYS[i]   bucket key i
    ARGV[1]   now: milliseconds in the caller's clock, or '' for Redis TIME
    ARGV[2 + 2 (i - 1) ...]  per key: rate, burst

  Output: { allowed, then per key: state, remaining, retryAfterMs, resetMs }:
    the decision a request of cost 0 would get (allowed: 1 unless one of
    them is denied, which only a bucket past its capacity does).
]]
${FRAME}${READ}${GCRA}${windowLibrary(2, 2)}
local width = 4
local n = #KEYS
local reply
if n > 0 then reply = { 1, false, false, false, false } else reply = { 1 } end
-- Only the effective windows are kept per key (for EFFECTIVE).
local buckets = {}
for i = 1, n do
  local a = 2 + 2 * (i - 1)
  local k = width * (i - 1) + 1
  local _
  local raw = redis.call('GET', KEYS[i])
  local rate = tonumber(ARGV[a])
  buckets[i] = {}
  if rate == nil then
    _, reply[k + 1], reply[k + 2], reply[k + 3], reply[k + 4], buckets[i].effective =
      window_decide(ARGV[a], tonumber(ARGV[a + 1]), raw, 0)
  else
    _, reply[k + 1], reply[k + 2], reply[k + 3], reply[k + 4] = consume(read(raw), rate, tonumber(ARGV[a + 1]), 0)
  end
  -- Even a cost of 0 is denied by a bucket fuller than its burst (a burst
  -- that shrank, a clock that went back).
  if reply[k + 1] ~= 1 then reply[1] = 0 end
end
${ENCODE}
${EFFECTIVE}
return reply
`;
