import { adaptivePolicy } from './adaptive-limit.js';
import { chargePolicy } from './charge-by-outcome.js';
import { delayPolicy } from './delay/max-delay.js';
import { dynamicLimitPolicy } from './dynamic-limit.js';
import type { AnyLimitPolicy } from './limit-policy.js';
import { penaltyPolicy } from './penalty.js';
import { shadowPolicy } from './shadow-limit.js';
import { settlePolicy } from './settle.js';
import { skipPolicy } from './skip.js';

/**
 * Every per-limit policy, in the order they are resolved (a policy may read
 * the fields of those before it: `shadow` refuses what `adaptive`, `dynamic`
 * and `charge` resolved; `blockDuration` and `maxDelay` refuse a shadow limit).
 * A new per-limit option is one line here and its policy file.
 *
 * @internal
 */
export const LIMIT_POLICIES: readonly AnyLimitPolicy[] = [
  dynamicLimitPolicy,
  adaptivePolicy,
  chargePolicy,
  skipPolicy,
  shadowPolicy,
  penaltyPolicy,
  delayPolicy,
  settlePolicy,
];
