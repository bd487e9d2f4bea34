import type { RateLimitDecision } from '../../lib/algorithms/rate-limit-decision.js';
import type { ConsumeResult } from '../../lib/store/rate-limit-store.interface.js';
import type { LeaseResult } from './lease.interface.js';

/** What a charge wrote, as a refund needs it: the stored value found, and the value written ('' for none). */
export interface Receipt {
  readonly previous: string;
  readonly written: string;
}

/** What one script call answers: the decisions, the extras (lease) and the receipts (when asked). */
export interface ScriptAnswer extends LeaseResult {
  /** Per key, when the call was asked for receipts (empty otherwise). */
  readonly receipts: readonly Receipt[];
}

/**
 * Reads a script's reply (see `scripts/gcra.lua.ts`): numbers come as
 * integer replies when they are exact integers, else as text, so fractions
 * and infinity survive; `allowed`, then per key a state (1 admitted, 0 denied
 * by the limit, 2 the cost exceeds the burst), `remaining`, `retryAfterMs`,
 * `resetMs`, then the receipt when asked for; a lease ends with the extras,
 * one per key, and a call with a window key with each key's
 * `effectiveWindowMs` (-1 for a token bucket: none).
 */
export function parseReply(
  reply: unknown,
  count: number,
  lease: boolean,
  withReceipts: boolean,
  windows = false,
  fleet = false,
): ScriptAnswer {
  const width = withReceipts ? 6 : 4;
  if (
    !Array.isArray(reply) ||
    reply.length !== 1 + width * count + (lease || windows ? count : 0) + (fleet ? 7 * count : 0)
  ) {
    throw new Error(`unexpected reply from the rate-limit script: ${errorText(reply)}`);
  }
  const decisions: RateLimitDecision[] = new Array(count);
  const receipts: Receipt[] = withReceipts ? new Array(count) : [];
  for (let i = 0; i < count; i++) {
    const base = 1 + width * i;
    const state = parseNumber(reply[base]);
    const remaining = parseNumber(reply[base + 1]);
    const retryAfterMs = parseNumber(reply[base + 2]);
    const resetMs = parseNumber(reply[base + 3]);
    if (state === 1) decisions[i] = { allowed: true, remaining, retryAfterMs, resetMs };
    else if (state === 0)
      decisions[i] = { allowed: false, remaining, retryAfterMs, resetMs, reason: 'limit' };
    else if (state === 2)
      decisions[i] = {
        allowed: false,
        remaining,
        retryAfterMs,
        resetMs,
        reason: 'cost-exceeds-burst',
      };
    else throw new Error(`unexpected decision from the rate-limit script: ${String(reply[base])}`);
    // A window's key: its effective window follows the decisions (-1 for a token bucket's).
    const effective = windows ? parseNumber(reply[1 + width * count + i]) : -1;
    if (effective >= 0) decisions[i] = { ...decisions[i]!, effectiveWindowMs: effective };
    if (withReceipts)
      receipts[i] = { previous: String(reply[base + 4]), written: String(reply[base + 5]) };
  }
  const extras: number[] = new Array<number>(count).fill(0);
  if (lease) for (let i = 0; i < count; i++) extras[i] = parseNumber(reply[1 + width * count + i]);
  const answer = { allowed: parseNumber(reply[0]) === 1, decisions, receipts, extras };
  if (!fleet) return answer;
  const instances: number[] = new Array<number>(count);
  const epochs: string[] = new Array<string>(count);
  const loads: number[] = new Array<number>(count);
  const paces: number[] = new Array<number>(count);
  const paceMs: number[] = new Array<number>(count);
  const paceLumps: number[] = new Array<number>(count);
  const paceSavings: number[] = new Array<number>(count);
  for (let i = 0; i < count; i++) {
    instances[i] = parseNumber(reply[1 + width * count + count + i]);
    epochs[i] = String(reply[1 + width * count + 2 * count + i]);
    loads[i] = parseNumber(reply[1 + width * count + 3 * count + i]);
    paces[i] = parseNumber(reply[1 + width * count + 4 * count + i]);
    paceMs[i] = parseNumber(reply[1 + width * count + 5 * count + i]);
    paceLumps[i] = parseNumber(reply[1 + width * count + 6 * count + i]);
    paceSavings[i] = parseNumber(reply[1 + width * count + 7 * count + i]);
  }
  return { ...answer, instances, epochs, loads, paces, paceMs, paceLumps, paceSavings };
}

/** A number of the reply: an integer reply (a number, or its text for clients set to return text), or text. */
function parseNumber(field: unknown): number {
  if (typeof field === 'number') return field === 0 ? 0 : field;
  const text = String(field);
  if (text === 'inf') return Number.POSITIVE_INFINITY;
  const value = Number(text);
  if (Number.isNaN(value)) throw new Error(`unexpected number from the rate-limit script: ${text}`);
  // `-0` would make two equal decisions unequal for deep comparisons.
  return value === 0 ? 0 : value;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** An answer as `consume`, `peek` and `refund` give it. */
export function toConsumeResult(answer: ScriptAnswer): ConsumeResult {
  return { allowed: answer.allowed, decisions: answer.decisions };
}

/** An answer as `lease` gives it. */
export function toLeaseResult(answer: ScriptAnswer): LeaseResult {
  const { allowed, decisions, extras, instances, epochs, loads } = answer;
  const { paces, paceMs, paceLumps, paceSavings } = answer;
  return instances === undefined
    ? { allowed, decisions, extras }
    : {
        allowed,
        decisions,
        extras,
        instances,
        epochs: epochs ?? [],
        loads: loads ?? [],
        paces: paces ?? [],
        paceMs: paceMs ?? [],
        paceLumps: paceLumps ?? [],
        paceSavings: paceSavings ?? [],
      };
}
