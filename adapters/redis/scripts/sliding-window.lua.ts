/**
 * `lib/algorithms/sliding-window.ts` in Lua, operation for operation (the
 * weighted two-window estimate, `slidingWaitMs`, the clamping of a stored
 * window later than now); checked against the same scenario table
 * (test/utils/window-scenarios.ts, `redis.window-scenarios.spec.ts`).
 *
 * Assignments to names `window.lua.ts` declares (see `fixed-window.lua.ts`).
 *
 * `sliding_consume(w, quota, st, cost)`: `w` the window length (ms), `st`
 * the stored state or nil. Returns what `fixed_consume` returns.
 */
export const SLIDING_WINDOW = `
  -- slidingWaitMs: ms from elapsed until previous x (1 - e / w) + current + cost <= quota.
  slide_wait = function(previous, current, elapsed, w, quota, cost)
    if cost > quota + TOKEN_EPSILON then return INF end
    if previous * (1 - elapsed / w) + current + cost <= quota + TOKEN_EPSILON then return 0 end
    if current + cost <= quota + TOKEN_EPSILON then
      return math.max(0, w * (1 - (quota - current - cost) / previous) - elapsed)
    end
    local nxt = 0
    if current > 0 then nxt = w * (1 - (quota - cost) / current) end
    return w - elapsed + math.max(0, nxt)
  end

  sliding_consume = function(w, quota, st, cost)
    local ws = frame - frame % w
    local previous, count = 0, 0
    if st ~= nil then
      if st[1] >= ws then
        ws, previous, count = st[1], st[4], st[3]
      elseif st[1] == ws - w then
        previous = st[3]
      end
    end
    -- at = max(now, ws): never negative elapsed time; lag: how far ahead that is.
    local lag, elapsed = 0, 0
    local ahead = (ws - frame) - now
    if ahead > 0 then lag = ahead else elapsed = -ahead end
    local estimate = previous * (1 - elapsed / w) + count
    local allowed = cost <= quota + TOKEN_EPSILON and estimate + cost <= quota + TOKEN_EPSILON
    local counted, used = count, estimate
    if allowed then counted, used = count + cost, estimate + cost end
    local remaining = math.max(0, math.floor(quota - used + TOKEN_EPSILON))
    local retry = 0
    if not allowed then retry = lag + slide_wait(previous, count, elapsed, w, quota, cost) end
    local reset = lag + slide_wait(previous, counted, elapsed, w, quota, quota)
    local effective = lag + slide_wait(previous, counted + remaining, elapsed, w, quota, 1)
    if allowed then return { ws, ws + w, counted, previous, ws + 2 * w }, 1, remaining, 0, reset, effective end
    local state = 0
    if cost > quota + TOKEN_EPSILON then state = 2 end
    return nil, state, remaining, retry, reset, effective
  end
`;
