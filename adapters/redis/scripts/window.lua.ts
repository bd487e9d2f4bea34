import { FIXED_WINDOW } from './fixed-window.lua.js';
import { replyNumber } from './gcra.lua.js';
import { SLIDING_WINDOW } from './sliding-window.lua.js';

/**
 * The window algorithms' part of the scripts (`consume`, `evaluate`,
 * `peek`, `refund`), bullmq style like `gcra.lua.ts`: text fragments the
 * scripts include.
 *
 * How a key says it is a window: where a token bucket's key has its rate
 * (a number), a window's has a spec, text that is no number:
 * - `f<windowMs>`: fixed window aligned on multiples of windowMs since the epoch;
 * - `a<windowMs>`: fixed window anchored at its first hit (`anchor: 'first-hit'`,
 *   `@nestjs/throttler`'s windows): it starts at the first request after the
 *   last one ended; a block (`block-window.lua.ts`) may make it longer;
 * - `s<windowMs>`: sliding window;
 * - `c<b0>,<b1>,<b2>,<b3>`: fixed calendar window: boundaries (ms) of the
 *   window before the caller's current one, of the current one, and of the
 *   next (Lua has no time zone database, so the caller computes them). The
 *   script takes the one of the three windows its own time is in: with
 *   Redis server time, clocks that disagree by less than a window agree.
 *   A time outside `[b0, b3)` is an error reply (the call fails, and the
 *   caller's fail mode decides): no window sent is the right one.
 * The burst's place holds the quota.
 *
 * Stored value: `<start>:<end>:<count>:<previous>` (`%.17g` each), expiring
 * when the state stops mattering: a fixed window's end, a sliding window's
 * end plus one window (when its count has slid out too).
 *
 * Reply: when a call has a window key, one more field per key after the
 * decisions (and receipts): draft -11's `t` in ms, `effectiveWindowMs`
 * (-1 for a token bucket's key).
 */

/**
 * Declarations, and the closures only when the call has a window key
 * (`has_window`, which the including script sets while it reads its
 * arguments: see {@link MARK_WINDOW}). A script's functions are made anew on
 * every call, so a call with token buckets only makes none of these.
 */
export const WINDOW_FUNCTIONS = `
local fixed_consume, sliding_consume, slide_wait, window_parse, window_decide, window_write
if has_window then
${FIXED_WINDOW}
${SLIDING_WINDOW}
  -- A stored value as { start, end, count, previous }, nil when none or unreadable.
  window_parse = function(raw)
    if not raw then return nil end
    local a, b, c, d = string.match(raw, '^([^:]+):([^:]+):([^:]+):([^:]+)$')
    a, b, c, d = tonumber(a), tonumber(b), tonumber(c), tonumber(d)
    if a == nil or b == nil or c == nil or d == nil then return nil end
    return { a, b, c, d }
  end

  -- The decision for cost: the state to store (or nil), state, remaining,
  -- retryAfterMs, resetMs, effectiveWindowMs.
  window_decide = function(spec, quota, raw, cost)
    local kind = string.sub(spec, 1, 1)
    local st = window_parse(raw)
    if kind == 's' then return sliding_consume(tonumber(string.sub(spec, 2)), quota, st, cost) end
    local ws, we
    if kind == 'a' then
      -- Anchored at the first hit (FixedWindowLimit.anchor): the stored
      -- window counts until its end (a block's end included), then a new one
      -- starts now.
      local t = frame + now
      if st ~= nil and st[2] > t then ws, we = st[1], st[2]
      else ws, we, st = t, t + tonumber(string.sub(spec, 2)), nil end
    elseif kind == 'f' then
      local w = tonumber(string.sub(spec, 2))
      ws = frame - frame % w
      we = ws + w
    else
      local b0, b1, b2, b3 = string.match(spec, '^c([^,]+),([^,]+),([^,]+),([^,]+)$')
      b0, b1, b2, b3 = tonumber(b0), tonumber(b1), tonumber(b2), tonumber(b3)
      -- Our time in none of the three windows: the caller's clock and ours
      -- disagree by more than a window. No window sent is the right one (the
      -- last has ended: its count would expire at once), so refuse the call.
      if (b0 - frame) - now > 0 or (b3 - frame) - now <= 0 then
        error({ err = string.format('ERR rate-limit clock skew: Redis time %.0f ms is outside the calendar windows [%.0f, %.0f) computed from the caller clock (they disagree by more than a window)', frame, b0, b3) })
      end
      if (b1 - frame) - now > 0 then ws, we = b0, b1
      elseif (b2 - frame) - now > 0 then ws, we = b1, b2
      else ws, we = b2, b3 end
    end
    return fixed_consume(ws, we, quota, st, cost)
  end

  -- Stores st ({ start, end, count, previous, expires }; raw: the exact
  -- value to put back instead), expiring at expires (absolute ms).
  window_write = function(key, st, raw)
    local value = raw or string.format('%.17g:%.17g:%.17g:%.17g', st[1], st[2], st[3], st[4])
    local expires = st[5]
    if client_time then
      local px = math.ceil((expires - frame) - now + padding)
      if px > 0 then redis.call('SET', key, value, 'PX', string.format('%.0f', px)) else redis.call('DEL', key) end
    elseif modern then
      redis.call('SET', key, value, 'PXAT', string.format('%.0f', math.ceil(expires + padding)))
    else
      redis.call('SET', key, value)
      redis.call('PEXPIREAT', key, string.format('%.0f', math.ceil(expires + padding)))
    end
    return value
  end
end
`;

/** Statement: `local has_window = false`, before the loop that reads the arguments. */
export const WINDOW_FLAG = `
local has_window = false
`;

/**
 * Statement, in the loop that reads the arguments, after `buckets[i]` is
 * made with `rate = tonumber(ARGV[a])`: a rate that is no number is a
 * window's spec.
 */
export const MARK_WINDOW = `if buckets[i].rate == nil then buckets[i].spec = ARGV[a]; has_window = true end`;

/**
 * For a script without such a loop (peek): the flag from a scan of the
 * arguments (`first`, `stride`: where each key's rate-or-spec is in ARGV),
 * then {@link WINDOW_FUNCTIONS}.
 */
export function windowLibrary(first: number, stride: number): string {
  return `
local has_window = false
for i = 1, #KEYS do
  if tonumber(ARGV[${first} + ${stride} * (i - 1)]) == nil then has_window = true end
end
${WINDOW_FUNCTIONS}`;
}

/**
 * Block, `DECIDE` of `gcra.lua.ts` for buckets that may be windows (`b.spec`
 * set, `b.raw` the stored value): sets `b.charged`, `b.effective`.
 */
export const DECIDE_ANY = `
local allowed = true
for i = 1, n do
  local b = buckets[i]
  local k = width * (i - 1) + 1
  if b.spec then
    b.charged, reply[k + 1], reply[k + 2], reply[k + 3], reply[k + 4], b.effective = window_decide(b.spec, b.burst, b.raw, b.cost)
  else
    b.charged, reply[k + 1], reply[k + 2], reply[k + 3], reply[k + 4] = consume(b.tat, b.rate, b.burst, b.cost)
  end
  allowed = allowed and reply[k + 1] == 1
end
`;

/** Block, `RESTATE` of `gcra.lua.ts` for buckets that may be windows. */
export const RESTATE_ANY = `
for i = 1, n do
  local k = width * (i - 1) + 1
  if reply[k + 1] == 1 then
    local b = buckets[i]
    local _
    if b.spec then
      _, reply[k + 1], reply[k + 2], reply[k + 3], reply[k + 4], b.effective = window_decide(b.spec, b.burst, b.raw, 0)
    else
      _, reply[k + 1], reply[k + 2], reply[k + 3], reply[k + 4] = consume(b.tat, b.rate, b.burst, 0)
    end
  end
end
`;

/**
 * Block: with a window key in the call, one field per key after the
 * decisions (`1 + width x n`): `b.effective`, -1 for a token bucket.
 */
export const EFFECTIVE = `
if has_window then
  for i = 1, n do
    local x = buckets[i].effective or -1
    local slot = 1 + width * n + i
    reply[slot] = x
    ${replyNumber('x', 'reply[slot]')}
  end
end
`;
