import { chargeStatements, FRAME, replyNumber } from './gcra.lua.js';

/**
 * `consume_one`: {@link CONSUME_LUA} for the request most requests are, one
 * token bucket and no receipt, written straight through: the same ARGV and
 * the same reply, the same arithmetic as `gcra.lua.ts` statement for
 * statement, without the general script's tables per bucket, loops and local
 * functions (each function a closure made on every call, about a thousand
 * Redis instructions apiece). The scenario table runs through it
 * (`redis.lua-scenarios.spec.ts`, single checks) as through the general one
 * (the same scenarios with a second check).
 */
export const CONSUME_ONE_LUA = `--[[
  consume_one: charge one token bucket its cost.

  Input:
    KEYS[1]   the bucket key
    ARGV[1]   now: milliseconds in the caller's clock, or '' for Redis TIME
    ARGV[2]   padding: extra milliseconds of key lifetime beyond the TAT
    ARGV[3]   '0' (no receipt: consume's layout)
    ARGV[4], ARGV[5], ARGV[6]   rate, burst, cost

  Output: { allowed, state, remaining, retryAfterMs, resetMs }, as consume.
]]
${FRAME}
local key = KEYS[1]
local rate, burst, cost = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])

-- read: the stored '<base>:<offset>' as a TAT of this frame.
local tat = nil
local raw = redis.call('GET', key)
if raw then
  local sep = string.find(raw, ':', 1, true)
  if sep then
    local base = tonumber(string.sub(raw, 1, sep - 1))
    local offset = tonumber(string.sub(raw, sep + 1))
    if base ~= nil and offset ~= nil then tat = (base - frame) + offset end
  end
end

-- consume (gcraConsume)
local interval = 1000 / rate
local capacity = burst * interval
local slack = TOKEN_EPSILON * interval + now_slack
local current
if tat == nil or tat < now then current = now else current = tat end
local state, remaining, retry_after, reset
local charged = nil
if cost > burst + TOKEN_EPSILON then
  state, retry_after = 2, INF
else
  -- charge: current + step, rounded up (one ulp at a time) so never charged less than step.
  local step = cost * interval
  local nxt
  ${chargeStatements('current', 'step', 'nxt')}
  local debt = nxt - now
  if debt <= capacity + slack then
    charged = nxt
    state, remaining, retry_after, reset = 1, math.max(0, math.floor((capacity - debt + slack) / interval)), 0, math.min(capacity, math.max(0, debt))
  else
    state, retry_after = 0, debt - capacity
  end
end
if charged == nil then
  -- Denied: the bucket as it stands.
  local debt = current - now
  remaining, reset = math.max(0, math.floor((capacity - debt + slack) / interval)), math.max(0, debt)
end

-- write (gcra.lua.ts' write, for a finite TAT)
if charged ~= nil then
  local padding = 0
  if ARGV[2] ~= '0' then padding = tonumber(ARGV[2]) end
  local value = string.format('%.17g:%.17g', frame, charged)
  if client_time then
    local px = math.ceil(charged - now + padding)
    if px > 0 then redis.call('SET', key, value, 'PX', string.format('%.0f', px)) else redis.call('DEL', key) end
  elseif modern then
    redis.call('SET', key, value, 'PXAT', string.format('%.0f', frame + math.ceil(charged + padding)))
  else
    redis.call('SET', key, value)
    redis.call('PEXPIREAT', key, string.format('%.0f', frame + math.ceil(charged + padding)))
  end
end

local allowed = 0
if state == 1 then allowed = 1 end
local reply = { allowed, state, remaining, retry_after, reset }
for j = 3, 5 do
  local x = reply[j]
  ${replyNumber('x', 'reply[j]')}
end
return reply
`;
