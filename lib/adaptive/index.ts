export type { AdaptiveOptions } from './adaptive-options.interface.js';
export type { AdaptiveOutcome } from './adaptive-outcome.js';
export type { AdaptiveRateChange, AdaptiveRateListener } from './adaptive-rate-change.interface.js';
export { AdaptiveController } from './adaptive-controller.js';
export { AdaptiveRateProvider } from './adaptive-rate.provider.js';
export { aimdNext, classifyWindow, type AimdParams, type AimdState, type WindowStats, type WindowVerdict } from './aimd.js';
export { effectiveBucket } from './effective-bucket.js';
export { ADAPTIVE_DEFAULTS, resolveAdaptiveOptions, type AdaptiveConfig } from './resolve-adaptive-options.js';
export { seededRandom } from './seeded-random.js';
