import type { ConsumeResult } from 'nestjs-holdup/store';
import { approximatelyWith } from '../../lib/store/contract/approximately.js';

/**
 * The expected result with its millisecond fields matched to within 1 µs: see
 * `approximatelyWith` (the store contract suites use the same).
 */
export function approximately(expected: ConsumeResult): ConsumeResult {
  return approximatelyWith(expect, expected);
}
