// `nestjs-holdup/adaptive`: the AIMD engine behind adaptive limits (the step,
// the controller, option resolution), for simulations and tools. Not needed to
// use adaptive limits: `AdaptiveOptions`, `AdaptiveRateProvider` and the types
// an application writes are exported from the root entry point.
export { AdaptiveController } from './adaptive-controller.js';
export {
  aimdNext,
  classifyWindow,
  type AimdParams,
  type AimdState,
  type WindowStats,
  type WindowVerdict,
} from './aimd.js';
export { effectiveBucket } from './effective-bucket.js';
export {
  ADAPTIVE_DEFAULTS,
  resolveAdaptiveOptions,
  type AdaptiveConfig,
} from './resolve-adaptive-options.js';
export { seededRandom } from './seeded-random.js';
