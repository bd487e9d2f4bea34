import { ENCODE, FRAME, GCRA, READ, RECEIPTS, WRITE } from './gcra.lua.js';
import {
  DECIDE_ANY,
  EFFECTIVE,
  MARK_WINDOW,
  RESTATE_ANY,
  WINDOW_FLAG,
  WINDOW_FUNCTIONS,
} from './window.lua.js';

/**
 * `consume`: charge every bucket its cost, or none of them (all or nothing
 * within the call; the Cluster path calls it once per slot).
 */
export const CONSUME_LUA = `--[[
  consume: charge every bucket its cost, or none of them.

  Input:
    KEYS[i]   bucket key i
    ARGV[1]   now: milliseconds in the caller's clock, or '' for Redis TIME
    ARGV[2]   padding: extra milliseconds of key lifetime beyond the TAT
    ARGV[3]   receipts: '1' to answer each key's receipt (what a refund of
              this charge needs: the Cluster slot-by-slot path), else '0'
    ARGV[4 + 3 (i - 1) ...]  per key: rate, burst, cost (a window: its
              spec and quota instead of rate and burst, window.lua.ts)

  Output: { allowed, then per key: state, remaining, retryAfterMs, resetMs
    [, previous, written] } (the receipt only when asked), then, when a
    key is a window's, effectiveWindowMs per key. Admitted: every
    key written with its charged TAT. Denied: nothing written, and keys that
    would have admitted report their bucket as it stands.
]]
${FRAME}${READ}${WRITE}${GCRA}${WINDOW_FLAG}
local receipts = ARGV[3] == '1'
local width = 4
if receipts then width = 6 end
local n = #KEYS
local buckets = {}
for i = 1, n do
  local a = 4 + 3 * (i - 1)
  local key = KEYS[i]
  local raw = redis.call('GET', key)
  buckets[i] = {
    key = key, rate = tonumber(ARGV[a]), burst = tonumber(ARGV[a + 1]), cost = tonumber(ARGV[a + 2]),
    raw = raw, tat = read(raw), charged = false, written = false,
  }
  ${MARK_WINDOW}
end
${WINDOW_FUNCTIONS}

local reply
if n > 0 then reply = { 1, false, false, false, false } else reply = { 1 } end
${DECIDE_ANY}
if allowed then
  for i = 1, n do
    local b = buckets[i]
    if b.spec then b.written = window_write(b.key, b.charged) else b.written = write(b.key, b.charged) end
  end
else
  ${RESTATE_ANY}
  reply[1] = 0
end
${ENCODE}
if receipts then
  ${RECEIPTS}
end
${EFFECTIVE}
return reply
`;
