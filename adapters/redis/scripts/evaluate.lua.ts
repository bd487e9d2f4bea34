import { ENCODE, FRAME, GCRA, READ } from './gcra.lua.js';
import {
  DECIDE_ANY,
  EFFECTIVE,
  MARK_WINDOW,
  RESTATE_ANY,
  WINDOW_FLAG,
  WINDOW_FUNCTIONS,
} from './window.lua.js';

/**
 * `evaluate`: the decisions `consume` would answer for a request that another
 * Cluster slot denied. Never writes.
 */
export const EVALUATE_LUA = `--[[
  evaluate: decide as consume would for a request denied elsewhere (by
  another Cluster slot); nothing is charged, nothing written.

  Input:
    KEYS[i]   bucket key i
    ARGV[1]   now: milliseconds in the caller's clock, or '' for Redis TIME
    ARGV[2 + 3 (i - 1) ...]  per key: rate, burst, cost

  Output: { allowed, then per key: state, remaining, retryAfterMs, resetMs }
    (then effectiveWindowMs per key when a key is a window's).
    Keys that admit report their bucket as it stands (the request is denied
    as a whole); allowed says whether this slot alone would have admitted.
]]
${FRAME}${READ}${GCRA}${WINDOW_FLAG}
local width = 4
local n = #KEYS
local buckets = {}
for i = 1, n do
  local a = 2 + 3 * (i - 1)
  local raw = redis.call('GET', KEYS[i])
  buckets[i] = {
    rate = tonumber(ARGV[a]), burst = tonumber(ARGV[a + 1]), cost = tonumber(ARGV[a + 2]),
    raw = raw, tat = read(raw), charged = false,
  }
  ${MARK_WINDOW}
end
${WINDOW_FUNCTIONS}

local reply
if n > 0 then reply = { 1, false, false, false, false } else reply = { 1 } end
${DECIDE_ANY}
if not allowed then reply[1] = 0 end
${RESTATE_ANY}
${ENCODE}
${EFFECTIVE}
return reply
`;
