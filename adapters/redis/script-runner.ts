import { isNoScript } from './no-script.js';
import type { RedisClient } from './redis-client.interface.js';
import { parseReply, type Receipt, type ScriptAnswer } from './script-reply.js';
import { ScriptBatch } from './script-batch.js';
import { awaitingReplies, scriptSender, type SendScript } from './script-sender.js';
import { SCRIPTS, type RedisScript } from './scripts/index.js';

/** A check with its Redis key, as the scripts are given it. */
export interface Bucket {
  readonly redisKey: string;
  /** Token bucket: its rate. A window: 0 (its `spec` goes in the rate's place). */
  readonly rate: number;
  /** Token bucket: its burst. A window: its quota. */
  readonly burst: number;
  /** A window's spec (`scripts/window.lua.ts`): `f<ms>`, `s<ms>`, `c<b0>,<b1>,<b2>,<b3>`. */
  readonly spec?: string;
  /** Tokens to charge (consume, evaluate, lease) or give back (refund); unused by peek. */
  readonly cost: number;
  /** Lease only: whole tokens wanted beyond the cost. */
  readonly maxExtra?: number;
  /** Lease with a fleet count only: whole tokens taken if other instances lease the bucket already (`scripts/fleet.lua.ts`). */
  readonly joinExtra?: number;
  /** With `joinExtra`: false when the caller does not count as asking (a first sighting). */
  readonly joinCounts?: boolean;
  /** Lease with a fleet count only: the bucket's epoch as the caller last saw it ('' or absent: none). */
  readonly epoch?: string;
  /** Lease with a fleet count only: the caller's demand over the bucket's rate. */
  readonly weight?: number;
  /** Lease with a fleet count only: a pace asked, `<tokens/s>:<ms>:<instances>` ('' or absent: none). */
  readonly pace?: string;
}

/** Who asks a lease, for the fleet count (`scripts/fleet.lua.ts`): an instance id, and the count's window. */
export interface FleetMember {
  readonly id: string;
  readonly windowMs: number;
}

/**
 * One script call, as {@link ScriptRunner.run} is asked it: which script,
 * and for `consume` and `lease` whether to answer the receipts a refund
 * needs (asked only by the Cluster slot-by-slot path, the one that may have
 * to refund); for `refund`, the receipts of the charge given back, when it
 * has them.
 */
export type Operation =
  | { readonly script: 'consume'; readonly receipts: boolean }
  /** `fleet`: count the instances leasing each bucket (`scripts/fleet.lua.ts`). */
  | { readonly script: 'lease'; readonly receipts: boolean; readonly fleet?: FleetMember }
  | { readonly script: 'evaluate' | 'peek' }
  /** A reservation's difference: each bucket's `cost` carries its signed delta (`scripts/settle.lua.ts`). */
  | { readonly script: 'settle' }
  /**
   * A penalty: each bucket's `cost` carries its block duration (ms); with
   * `unlessBlocked`, buckets still serving a block are left as they are.
   */
  | { readonly script: 'block'; readonly unlessBlocked?: boolean }
  /** The same for windows anchored at their first hit (`scripts/block-window.lua.ts`). */
  | { readonly script: 'block_window'; readonly unlessBlocked?: boolean }
  | { readonly script: 'refund'; readonly receipts?: readonly Receipt[] };

export const CONSUME: Operation = { script: 'consume', receipts: false };
export const CONSUME_WITH_RECEIPTS: Operation = { script: 'consume', receipts: true };
export const LEASE: Operation = { script: 'lease', receipts: false };
export const LEASE_WITH_RECEIPTS: Operation = { script: 'lease', receipts: true };
export const EVALUATE: Operation = { script: 'evaluate' };
export const PEEK: Operation = { script: 'peek' };
export const BLOCK: Operation = { script: 'block' };
/** A penalty for a denial: buckets still serving a block keep it. */
export const BLOCK_UNLESS_BLOCKED: Operation = { script: 'block', unlessBlocked: true };
/** {@link BLOCK} and {@link BLOCK_UNLESS_BLOCKED} for anchored windows. */
export const BLOCK_WINDOW: Operation = { script: 'block_window' };
export const BLOCK_WINDOW_UNLESS_BLOCKED: Operation = {
  script: 'block_window',
  unlessBlocked: true,
};
/** Settle reservations: charge (into debt) or refund each bucket's delta. */
export const SETTLE: Operation = { script: 'settle' };
/** A refund without receipts: TAT -= cost x interval. */
export const REFUND: Operation = { script: 'refund' };

/**
 * Runs the store's scripts: every operation goes through {@link run}, by SHA
 * (`EVALSHA`); after a Redis restart, failover or `SCRIPT FLUSH` the
 * `NOSCRIPT` reply is answered with one `EVAL`, which also caches the script
 * again. Never `SCRIPT LOAD`, never `KEYS`/`SCAN`. The calls of one tick
 * leave in one socket write (`script-sender.ts`).
 */
export class ScriptRunner {
  private reloadCount = 0;
  /** `EVALSHA`, written as `script-sender.ts` says. */
  private readonly send: SendScript;
  /** ioredis' standalone client: concurrent `consume_one` calls in one script call (`script-batch.ts`). */
  private readonly batch: ScriptBatch | undefined;

  /**
   * @param clientTime `now` of each request decides (else Redis `TIME`).
   * @param paddingArg `ARGV[2]` of the scripts that write: see `expiryPaddingMs`.
   */
  constructor(
    private readonly client: RedisClient,
    private readonly clientTime: boolean,
    private readonly paddingArg: string,
  ) {
    this.send = scriptSender(client);
    const awaiting = awaitingReplies(client);
    this.batch =
      awaiting === undefined
        ? undefined
        : new ScriptBatch(
            (script, numkeys, args) => this.call(script, numkeys, args),
            awaiting,
            this.send.writeNow,
          );
  }

  /**
   * Sends the one-bucket consumes waiting for a batch now, ahead of a command
   * made after them (`script-batch.ts`): Redis runs the store's calls in the
   * order they were made.
   */
  flush(): void {
    this.batch?.flush();
  }

  /** `NOSCRIPT` replies answered by re-sending a script. */
  get reloads(): number {
    return this.reloadCount;
  }

  /** One script call on `buckets` (one Cluster slot): its reply, parsed. */
  run(op: Operation, buckets: readonly Bucket[], now: number): Promise<ScriptAnswer> {
    const single = isSingleTokenBucket(op, buckets);
    const script = single ? SCRIPTS.consume_one : SCRIPTS[op.script];
    const count = buckets.length;
    const args = this.args(op, buckets, now);
    const fleet = op.script === 'lease' && op.fleet !== undefined && !single;
    // block: each bucket's mark follows the buckets in KEYS; a fleet count, each bucket's fleet set.
    const keyCount = isBlock(op) || fleet ? 2 * count : count;
    const receipts = (op.script === 'consume' || op.script === 'lease') && op.receipts;
    const parse = (reply: unknown): ScriptAnswer => {
      // A lease of no extra answered by consume_one: its extras, none.
      if (single && op.script === 'lease' && Array.isArray(reply)) reply.push(0);
      return parseReply(
        reply,
        count,
        op.script === 'lease',
        receipts,
        buckets.some(isWindow),
        fleet,
      );
    };
    // Held for a batch only behind other calls awaiting replies; a lone call goes as it always did.
    const batched = single ? this.batch?.consumeOne(args) : undefined;
    if (batched !== undefined) return batched.then(parse);
    this.flush();
    return this.call(script, keyCount, args).then(parse);
  }

  /** `EVALSHA`; on `NOSCRIPT`, one `EVAL` (which caches the script again). */
  private call(script: RedisScript, keyCount: number, args: readonly string[]): Promise<unknown> {
    return this.send(script.sha, keyCount, args).then(undefined, (error: unknown) => {
      if (!isNoScript(error)) throw error;
      this.reloadCount++;
      return this.client.eval(script.source, keyCount, ...args);
    });
  }

  /** `KEYS` then `ARGV`, as each script's header lays them out. */
  private args(op: Operation, buckets: readonly Bucket[], now: number): string[] {
    const args: string[] = [];
    for (const bucket of buckets) args.push(bucket.redisKey);
    if (isBlock(op)) for (const bucket of buckets) args.push(blockMarkKey(bucket.redisKey));
    const fleet = op.script === 'lease' ? op.fleet : undefined;
    if (fleet !== undefined) for (const bucket of buckets) args.push(fleetKey(bucket.redisKey));
    args.push(this.clientTime ? String(now) : '');
    switch (op.script) {
      case 'consume':
        args.push(this.paddingArg, op.receipts ? '1' : '0');
        for (const b of buckets) args.push(rateArg(b), String(b.burst), String(b.cost));
        break;
      case 'lease':
        // A fleet count is never asked with receipts (one slot): 'f' in their place says it.
        args.push(this.paddingArg, fleet !== undefined ? 'f' : op.receipts ? '1' : '0');
        for (const b of buckets)
          args.push(String(b.rate), String(b.burst), String(b.cost), String(b.maxExtra ?? 0));
        if (fleet !== undefined) {
          args.push(fleet.id, String(Math.ceil(fleet.windowMs)));
          for (const b of buckets) {
            const join = b.joinExtra ?? 0;
            args.push(
              String(b.joinCounts === false ? -join : join),
              b.epoch ?? '',
              String(b.weight ?? 0),
              b.pace ?? '',
            );
          }
        }
        break;
      case 'evaluate':
        for (const b of buckets) args.push(rateArg(b), String(b.burst), String(b.cost));
        break;
      case 'peek':
        for (const b of buckets) args.push(rateArg(b), String(b.burst));
        break;
      case 'settle':
        args.push(this.paddingArg);
        for (const b of buckets) args.push(String(b.rate), String(b.burst), String(b.cost));
        break;
      case 'block':
        args.push(this.paddingArg, op.unlessBlocked === true ? '1' : '0');
        for (const b of buckets) args.push(String(b.rate), String(b.burst), String(b.cost));
        break;
      case 'block_window':
        args.push(this.paddingArg, op.unlessBlocked === true ? '1' : '0');
        for (const b of buckets) args.push(rateArg(b), String(b.burst), String(b.cost));
        break;
      case 'refund': {
        args.push(this.paddingArg);
        const receipts = op.receipts;
        buckets.forEach((b, i) => {
          const receipt = receipts?.[i];
          args.push(
            rateArg(b),
            String(b.burst),
            String(b.cost),
            receipt?.written ?? '',
            receipt?.previous ?? '',
          );
        });
        break;
      }
    }
    return args;
  }
}

/**
 * The key of a bucket's block mark (`scripts/block.lua.ts`): the bucket's
 * key, whose hash tag it keeps (same Cluster slot), and a suffix no bucket
 * key has (a bucket key ends with its tag's closing brace).
 */
export function blockMarkKey(redisKey: string): string {
  return `${redisKey}:block`;
}

/**
 * The key of a bucket's fleet set (`scripts/fleet.lua.ts`): the bucket's
 * key and its hash tag (same Cluster slot), with a suffix no bucket key has.
 */
export function fleetKey(redisKey: string): string {
  return `${redisKey}:fleet`;
}

/** The rate's argument: a window's spec in its place. */
function rateArg(bucket: Bucket): string {
  return bucket.spec ?? String(bucket.rate);
}

/** Block scripts: each bucket's mark follows the buckets in KEYS. */
function isBlock(op: Operation): boolean {
  return op.script === 'block' || op.script === 'block_window';
}

function isWindow(bucket: Bucket): boolean {
  return bucket.spec !== undefined;
}

/**
 * A consume of one token bucket without receipt, or a lease of one that asks
 * no extra token (a key cold on a `TwoTierStore`, which is a consume):
 * `consume_one` answers it. Same arguments (a lease's `maxExtra` comes after
 * what it reads), same reply (a lease's extras, none, are added).
 */
function isSingleTokenBucket(op: Operation, buckets: readonly Bucket[]): boolean {
  if (buckets.length !== 1 || buckets[0]!.spec !== undefined) return false;
  if (op.script === 'consume') return !op.receipts;
  return (
    op.script === 'lease' && !op.receipts && op.fleet === undefined && !(buckets[0]!.maxExtra! > 0)
  );
}
