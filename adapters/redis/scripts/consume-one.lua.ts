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
${decideBucket('1', (j) => String(3 + j))}
local allowed = 0
if state == 1 then allowed = 1 end
local reply = { allowed, state, remaining, retry_after, reset }
for j = 3, 5 do
  local x = reply[j]
  ${replyNumber('x', 'reply[j]')}
end
return reply
`;

/** Batch only: GET's error reply (a key holding another type) kept as the call's failure. */
const GET_FAILURE = `
if type(raw) == 'table' then failure, raw = raw.err or 'ERR GET failed', false end`;
/** Batch only: a call that failed writes nothing. */
const NO_WRITE_ON_FAILURE = `
if failure then charged = nil end`;

/**
 * Lua statements: one token bucket's decision, charged and written, from
 * `KEYS[<index>]` and its rate, burst and cost at `ARGV[arg(1..3)]`; leaves
 * `state`, `remaining`, `retry_after`, `reset` (numbers) in locals of the
 * block. Shared by `consume_one` (index 1, ARGV 4 to 6, written as literals)
 * and `consume_batch` (a loop over its keys: `consume-batch.lua.ts`), so both
 * decide alike statement for statement. Needs {@link FRAME} before it.
 *
 * `own`: for the batch, each command through `redis.pcall`, its error kept
 * in the local `failure` (declared by the includer) instead of ending the
 * script: a key holding another type, or a write refused (OOM), fails that
 * call alone, writing nothing for it, and the batch's other calls go on.
 */
export function decideBucket(index: string, arg: (j: 1 | 2 | 3) => string, own = false): string {
  /** A command; in `own` mode through pcall, an error reply kept in `failure`. */
  const command = (args: string): string =>
    own
      ? `local reply = redis.pcall(${args}) if type(reply) == 'table' and reply.err then failure = reply.err end`
      : `redis.call(${args})`;
  return `local key = KEYS[${index}]
local rate, burst, cost = tonumber(ARGV[${arg(1)}]), tonumber(ARGV[${arg(2)}]), tonumber(ARGV[${arg(3)}])

-- read: the stored '<base>:<offset>' as a TAT of this frame.
local tat = nil
local raw = redis.${own ? 'pcall' : 'call'}('GET', key)${own ? GET_FAILURE : ''}
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

-- write (gcra.lua.ts' write, for a finite TAT)${own ? NO_WRITE_ON_FAILURE : ''}
if charged ~= nil then
  local padding = 0
  if ARGV[2] ~= '0' then padding = tonumber(ARGV[2]) end
  local value = string.format('%.17g:%.17g', frame, charged)
  if client_time then
    local px = math.ceil(charged - now + padding)
    if px > 0 then ${command("'SET', key, value, 'PX', string.format('%.0f', px)")} else ${command("'DEL', key")} end
  elseif modern then
    ${command("'SET', key, value, 'PXAT', string.format('%.0f', frame + math.ceil(charged + padding))")}
  else
    ${command("'SET', key, value")}
    ${command("'PEXPIREAT', key, string.format('%.0f', frame + math.ceil(charged + padding))")}
  end
end
`;
}
