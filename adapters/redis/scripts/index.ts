import { createHash } from 'node:crypto';
import { BLOCK_LUA } from './block.lua.js';
import { BLOCK_WINDOW_LUA } from './block-window.lua.js';
import { CONSUME_LUA } from './consume.lua.js';
import { CONSUME_BATCH_LUA } from './consume-batch.lua.js';
import { CONSUME_ONE_LUA } from './consume-one.lua.js';
import { EVALUATE_LUA } from './evaluate.lua.js';
import { LEASE_LUA } from './lease.lua.js';
import { PEEK_LUA } from './peek.lua.js';
import { REFUND_LUA } from './refund.lua.js';
import { SETTLE_LUA } from './settle.lua.js';

/** The store's Lua scripts, one per operation (see each file's header for its KEYS, ARGV and reply). */
export type ScriptName =
  | 'consume'
  | 'consume_one'
  | 'consume_batch'
  | 'evaluate'
  | 'peek'
  | 'refund'
  | 'lease'
  | 'block'
  | 'block_window'
  | 'settle';

/** A script as the store sends it: by SHA1 (`EVALSHA`), by source when Redis lost it (`EVAL`). */
export interface RedisScript {
  readonly name: ScriptName;
  readonly source: string;
  readonly sha: string;
}

function script(name: ScriptName, source: string): RedisScript {
  return { name, source, sha: createHash('sha1').update(source).digest('hex') };
}

/** Every script, by operation. */
export const SCRIPTS: Readonly<Record<ScriptName, RedisScript>> = {
  consume: script('consume', CONSUME_LUA),
  /** `consume` of one token bucket without receipt: the common request, straight through. */
  consume_one: script('consume_one', CONSUME_ONE_LUA),
  /** Several requests' `consume_one` calls in one script call, each decided on its own (`script-batch.ts`). */
  consume_batch: script('consume_batch', CONSUME_BATCH_LUA),
  evaluate: script('evaluate', EVALUATE_LUA),
  peek: script('peek', PEEK_LUA),
  refund: script('refund', REFUND_LUA),
  lease: script('lease', LEASE_LUA),
  block: script('block', BLOCK_LUA),
  /** A penalty on windows anchored at their first hit (the throttler compat windows). */
  block_window: script('block_window', BLOCK_WINDOW_LUA),
  /** A reservation's difference: refund, or charge into debt. */
  settle: script('settle', SETTLE_LUA),
};
