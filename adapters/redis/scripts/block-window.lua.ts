import { ENCODE, FRAME, WRITE } from './gcra.lua.js';
import { EFFECTIVE, WINDOW_FUNCTIONS } from './window.lua.js';

/**
 * `block_window`: a penalty on fixed windows anchored at their first hit
 * (`anchor: 'first-hit'`, the throttler compat entry point's windows),
 * `lib/algorithms/fixed-window.ts` `anchoredWindowBlock` in Lua: the window
 * full until the block ends, whatever was left of it. The block mark beside
 * each key follows `block.lua.ts`'s rule (kept apart from that script, which
 * is token buckets' only), so that a retry near a block's end (`unlessBlocked`)
 * does not start it over: the same rule as `MemoryStore.block`.
 */
export const BLOCK_WINDOW_LUA = `--[[
  block_window: keep each anchored window full for a duration from now.

  Input:
    KEYS[i]       window key i (i = 1..n)
    KEYS[n + i]   its block mark: the value the last block wrote to the key
    ARGV[1]   now: milliseconds in the caller's clock, or '' for Redis TIME
    ARGV[2]   padding: extra milliseconds of key lifetime beyond the window's end
    ARGV[3]   '1': unless blocked (a penalty for a denial), else '0'
    ARGV[4 + 3 (i - 1) ...]  per key: spec ('a<windowMs>'), quota, durationMs

  Per key: the stored window becomes { now, now + durationMs, quota }, and the
  value written is kept in the mark, which expires when the block ends.
  Unless blocked: a key that still holds its mark's value (nothing wrote it
  since) and whose block has not ended is left as it is.

  Output: { 0, then per key: state, remaining, retryAfterMs, resetMs }: each
    window afterwards, as peek answers it; then effectiveWindowMs per key.
]]
${FRAME}${WRITE}
local has_window = true
${WINDOW_FUNCTIONS}
local width = 4
local n = #KEYS / 2
local unless_blocked = ARGV[3] == '1'
local t = frame + now
local reply
if n > 0 then reply = { 0, false, false, false, false } else reply = { 0 } end
local buckets = {}
for i = 1, n do
  local a = 4 + 3 * (i - 1)
  local key = KEYS[i]
  local spec, quota, duration = ARGV[a], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  local raw = redis.call('GET', key)
  local serving = false
  if unless_blocked and raw then
    local st = window_parse(raw)
    serving = st ~= nil and st[2] > t and redis.call('GET', KEYS[n + i]) == raw
  end
  if not serving then
    raw = window_write(key, { t, t + duration, quota, 0, t + duration })
    redis.call('SET', KEYS[n + i], raw, 'PX', string.format('%.0f', math.max(1, math.ceil(duration))))
  end
  local k = width * (i - 1) + 1
  local _
  buckets[i] = {}
  _, reply[k + 1], reply[k + 2], reply[k + 3], reply[k + 4], buckets[i].effective = window_decide(spec, quota, raw, 0)
end
${ENCODE}
${EFFECTIVE}
return reply
`;
