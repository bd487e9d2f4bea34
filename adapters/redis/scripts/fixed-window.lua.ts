/**
 * `lib/algorithms/fixed-window.ts` in Lua, operation for operation (same
 * tolerance, same clamping of a stored window later than now, same decision
 * fields); checked against the same scenario table
 * (test/utils/window-scenarios.ts, `redis.window-scenarios.spec.ts`).
 *
 * A function-valued assignment, not a `local function`: `window.lua.ts`
 * declares the names and makes the closures only in calls that have a
 * window key (a closure costs about a thousand Redis instructions per call).
 *
 * `fixed_consume(ws, we, quota, st, cost)`: `ws`/`we` the current window
 * (absolute ms), `st` the stored state (`{ start, end, count, previous }`
 * or nil). Returns the state to store (nil when nothing is charged), then
 * state (1 admitted, 0 denied by the limit, 2 the cost exceeds the quota),
 * remaining, retryAfterMs, resetMs, effectiveWindowMs.
 */
export const FIXED_WINDOW = `
  fixed_consume = function(ws, we, quota, st, cost)
    local count = 0
    -- The stored window counts when current, or later (a clock that went back).
    if st ~= nil and st[1] >= ws then ws, we, count = st[1], st[2], st[3] end
    local until_end = (we - frame) - now
    -- resetMs: until the count starts over, 0 while nothing is counted.
    local reset = 0
    if count > TOKEN_EPSILON then reset = until_end end
    if cost > quota + TOKEN_EPSILON then
      return nil, 2, math.max(0, math.floor(quota - count + TOKEN_EPSILON)), INF, reset, until_end
    end
    if count + cost <= quota + TOKEN_EPSILON then
      local charged = count + cost
      if charged > TOKEN_EPSILON then reset = until_end end
      return { ws, we, charged, 0, we }, 1, math.max(0, math.floor(quota - charged + TOKEN_EPSILON)), 0, reset, until_end
    end
    return nil, 0, math.max(0, math.floor(quota - count + TOKEN_EPSILON)), until_end, reset, until_end
  end
`;
