// The adaptive limits as users meet them; the engine itself (AIMD step,
// controller, option resolution) is exported from `nestjs-holdup/algorithms`.
export type { AdaptiveHandlerResult, AdaptiveOptions } from '../interfaces/adaptive-options.interface.js';
export type { AdaptiveOutcome } from './adaptive-outcome.js';
export type { AdaptiveRateChange, AdaptiveRateListener } from './adaptive-rate-change.interface.js';
export { AdaptiveRateProvider } from './adaptive-rate.provider.js';
