// `nestjs-holdup/algorithms`: the pure math behind the module, for custom
// stores (decide exactly as the built-in stores do; the store contract and
// its helpers are in `nestjs-holdup/store`), simulations and tools.
// Pure functions: state, time and limit in; state and decision out. Not needed
// to use the module; more likely than the root entry point to change between
// minor versions while the library is 0.x.
export {
  gcraConsume,
  gcraPeek,
  gcraRefund,
  gcraSettle,
  emissionIntervalMs,
  nextTokenMs,
  gcraBlock,
  type BucketLimit,
  type GcraOutcome,
} from './gcra.js';
export type { DenyReason, RateLimitDecision } from './rate-limit-decision.js';
export { fixedWindowBounds, fixedWindowConsume, fixedWindowPeek } from './fixed-window.js';
export { slidingWaitMs, slidingWindowConsume, slidingWindowPeek } from './sliding-window.js';
export { calendarBoundaries, calendarWindow, type WindowBounds } from './calendar-window.js';
export { windowRefund, type WindowOutcome, type WindowState } from './window-state.js';
export { TOKEN_EPSILON } from './token-epsilon.js';
