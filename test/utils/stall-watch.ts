/**
 * How late this process has run since {@link watchStalls} (or the last
 * `reset`): on a loaded 2-core CI machine the process can go unscheduled,
 * or crawl, for a second or more, and every timer (a store's deadline among
 * them) then fires that much late. A bound on how long a call took to be
 * answered adds this allowance, so that a stall of the machine is not taken
 * for a hang. A call that waits on a silent Redis leaves the process idle:
 * its wait is not excused by it.
 *
 * Measured by a 10 ms interval timer of its own (unref'd): the longest gap
 * between two of its ticks beyond 10 ms, the gap in progress included.
 * (Node's `monitorEventLoopDelay` misses a loop held by synchronous work.)
 */
export interface StallWatch {
  /** The longest stall seen since it started or was reset, in milliseconds. */
  readonly maxMs: number;
  /** Starts over: what is measured next is excused by its own stalls only. */
  reset(): void;
  stop(): void;
}

const TICK_MS = 10;

export function watchStalls(): StallWatch {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last - TICK_MS);
    last = now;
  }, TICK_MS);
  timer.unref();
  return {
    get maxMs() {
      return Math.max(longest, performance.now() - last - TICK_MS, 0);
    },
    reset() {
      longest = 0;
      last = performance.now();
    },
    stop: () => clearInterval(timer),
  };
}
