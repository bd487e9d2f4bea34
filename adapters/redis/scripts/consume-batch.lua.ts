import { decideBucket } from './consume-one.lua.js';
import { FRAME, replyNumber } from './gcra.lua.js';

/**
 * `consume_batch`: the `consume_one` calls of several requests in one script
 * call (`script-batch.ts`), each decided on its own, in order, as if each had
 * been its own call: a later call on the same key sees what the earlier one
 * wrote, and one call's denial or error changes nothing for the others (not
 * all or nothing, unlike `consume`). What it saves is Redis' cost per command
 * (the command's parsing, the script's call, `TIME`), paid once per batch
 * (`bench/redis`, 16 and 256 in flight). Every key is in `KEYS` (Dragonfly
 * and Valkey lock what a script declares); standalone servers only (the keys
 * of unrelated requests are in any slots).
 */
export const CONSUME_BATCH_LUA = `--[[
  consume_batch: charge n token buckets their costs, each a request of its own.

  Input:
    KEYS[i]   the i-th call's bucket key (i = 1..n)
    ARGV[1]   now: milliseconds in the caller's clock, or '' for Redis TIME
              (one time for the batch: its calls share it, see script-batch.ts)
    ARGV[2]   padding: extra milliseconds of key lifetime beyond the TAT
    ARGV[3]   '0' (no receipt: consume's layout)
    ARGV[3i+1], ARGV[3i+2], ARGV[3i+3]   the i-th call's rate, burst, cost

  Output: n times consume_one's reply, one after the other, 5 fields each:
    { allowed, state, remaining, retryAfterMs, resetMs } for call 1, then call 2, ...
    A call whose command failed (a key holding another type, a write refused):
    { 'error', <the error reply>, 0, 0, 0 }, nothing written for it.
]]
${FRAME}
local out = {}
for i = 1, #KEYS do
  local o = 3 * i
  local failure = nil
  ${decideBucket('i', (j) => `o + ${j}`, true)}
  local k = 5 * (i - 1)
  if failure then
    out[k + 1], out[k + 2], out[k + 3], out[k + 4], out[k + 5] = 'error', failure, 0, 0, 0
  else
    local allowed = 0
    if state == 1 then allowed = 1 end
    out[k + 1], out[k + 2], out[k + 3], out[k + 4], out[k + 5] = allowed, state, remaining, retry_after, reset
    for j = k + 3, k + 5 do
      local x = out[j]
      ${replyNumber('x', 'out[j]')}
    end
  end
end
return out
`;
