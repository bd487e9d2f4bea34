/**
 * Times relative to the first `now` a store sees.
 *
 * At `Date.now()` magnitudes (~1.7e12 ms) doubles are 2^-12 ms apart: coarser
 * than one token at very high rates, and enough to lose a token to rounding
 * at ordinary ones. Near zero they resolve far below a microsecond, so
 * in-process stores keep their state in this frame. (The Redis scripts do the
 * same with a frame per call: see `adapters/redis/scripts`.)
 *
 * For custom stores: exported by `nestjs-holdup/store`, which may change in a 0.x minor version.
 */
export class RelativeTime {
  private epoch: number | undefined;
  private last = 0;

  /** `now` (module clock, ms) in the store's frame. */
  relative(now: number): number {
    this.last = now;
    if (this.epoch === undefined) this.epoch = now;
    return now - this.epoch;
  }

  /** The absolute time of the frame's 0 (0 before any `now`): window algorithms add it back. */
  get origin(): number {
    return this.epoch ?? 0;
  }

  /** The last absolute `now` seen (0 before any): for work that runs outside a request. */
  get lastNow(): number {
    return this.last;
  }
}
