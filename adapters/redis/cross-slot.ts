import type { RateLimitDecision } from '../../lib/algorithms/rate-limit-decision.js';
import type { ConsumeResult } from '../../lib/store/rate-limit-store.interface.js';
import type { Receipt, ScriptAnswer } from './script-reply.js';
import {
  CONSUME_WITH_RECEIPTS,
  EVALUATE,
  LEASE_WITH_RECEIPTS,
  type Bucket,
  type Operation,
  type ScriptRunner,
} from './script-runner.js';
import { pick, place, type SlotGroup } from './slot-groups.js';

/**
 * Requests whose checks fall in more than one Cluster slot (see
 * `RedisStore`): one script call per slot.
 */

/** A slot already charged by a multi-slot consume or lease: what its refund needs. */
interface Charged {
  readonly group: SlotGroup;
  readonly receipts: readonly Receipt[];
  readonly extras: readonly number[];
}

/**
 * A consume (or lease) across slots, all or nothing: slot by slot in
 * ascending slot order, each slot charged in one atomic call that answers its
 * receipts. When a slot denies, the earlier slots get back what they gave
 * (exactly, from the receipts, when nobody charged them since) and the later
 * ones are only evaluated, both before the answer. When a call fails, the
 * earlier slots are refunded in the background and the failure is thrown. A
 * refund that cannot reach Redis calls `refundFailed` and leaves the
 * charging call's decision in the answer (the bucket is charged).
 */
export async function chargeAcrossSlots(
  runner: ScriptRunner,
  kind: 'consume' | 'lease',
  buckets: readonly Bucket[],
  groups: readonly SlotGroup[],
  now: number,
  refundFailed: () => void,
): Promise<ScriptAnswer> {
  const op = kind === 'consume' ? CONSUME_WITH_RECEIPTS : LEASE_WITH_RECEIPTS;
  const decisions: RateLimitDecision[] = new Array(buckets.length);
  const extras: number[] = new Array<number>(buckets.length).fill(0);
  const charged: Charged[] = [];
  const refund = () => refundCharged(runner, buckets, charged, now, decisions, refundFailed);
  for (let g = 0; g < groups.length; g++) {
    const group = groups[g]!;
    let result: ScriptAnswer;
    try {
      result = await runner.run(op, pick(buckets, group), now);
    } catch (error) {
      // This slot may or may not have been charged (no answer); the earlier
      // ones were: give those back, without making the caller wait.
      void refund();
      throw error;
    }
    place(decisions, group, result.decisions);
    if (result.allowed) {
      charged.push({ group, receipts: result.receipts, extras: result.extras });
      place(extras, group, result.extras);
      continue;
    }
    const later = groups.slice(g + 1);
    await Promise.all([
      refund(),
      ...later.map(async (rest) =>
        place(decisions, rest, (await runner.run(EVALUATE, pick(buckets, rest), now)).decisions),
      ),
    ]);
    return { allowed: false, decisions, extras: extras.fill(0), receipts: [] };
  }
  return { allowed: true, decisions, extras, receipts: [] };
}

/**
 * Gives back what `charged` took. Never rejects: a refund that fails leaves
 * the bucket charged, and the decision already recorded for it (taken from
 * the charging call) is then the truth.
 */
async function refundCharged(
  runner: ScriptRunner,
  buckets: readonly Bucket[],
  charged: readonly Charged[],
  now: number,
  decisions: RateLimitDecision[],
  refundFailed: () => void,
): Promise<void> {
  await Promise.all(
    charged.map(async ({ group, receipts, extras }) => {
      // A lease's extras go back with the cost.
      const taken = pick(buckets, group).map((bucket, i) => ({
        ...bucket,
        cost: bucket.cost + extras[i]!,
      }));
      try {
        place(
          decisions,
          group,
          (await runner.run({ script: 'refund', receipts }, taken, now)).decisions,
        );
      } catch {
        refundFailed();
      }
    }),
  );
}

/**
 * An operation with nothing to keep atomic across slots (peek, refund): every
 * slot at once, the decisions put back in request order.
 */
export async function eachSlot(
  runner: ScriptRunner,
  op: Operation,
  buckets: readonly Bucket[],
  groups: readonly SlotGroup[],
  now: number,
): Promise<ConsumeResult> {
  const decisions: RateLimitDecision[] = new Array(buckets.length);
  await Promise.all(
    groups.map(async (group) =>
      place(decisions, group, (await runner.run(op, pick(buckets, group), now)).decisions),
    ),
  );
  return { allowed: true, decisions };
}
