// `nestjs-holdup/algorithms`: the pure math behind the module, for custom
// stores (decide exactly as the built-in stores do), simulations and tools.
// Pure functions: state, time and limit in; state and decision out. Not needed
// to use the module; more likely than the root entry point to change between
// minor versions while the library is 0.x.
export {
  gcraConsume,
  gcraPeek,
  gcraRefund,
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
export { consumeAllOrNothing, reportUncharged, type BucketStates } from '../store/all-or-nothing.js';
export { bucketNamespace } from '../store/bucket-key.js';
export { parseRate } from '../limits/parse-rate.js';
export { AdaptiveController } from '../adaptive/adaptive-controller.js';
export { aimdNext, classifyWindow, type AimdParams, type AimdState, type WindowStats, type WindowVerdict } from '../adaptive/aimd.js';
export { effectiveBucket } from '../adaptive/effective-bucket.js';
export { ADAPTIVE_DEFAULTS, resolveAdaptiveOptions, type AdaptiveConfig } from '../adaptive/resolve-adaptive-options.js';
export { seededRandom } from '../adaptive/seeded-random.js';
