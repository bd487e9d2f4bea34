/**
 * Portable scripts (issue 29): every key a script touches is in KEYS[]
 * (Dragonfly refuses undeclared keys), the keys of one bucket share its hash
 * tag, and a NOSCRIPT reply, however worded, is answered with one EVAL.
 * Checked on what the runner hands the client (a recording fake: no server).
 */
import { isNoScript } from './no-script.js';
import type { RedisClient } from './redis-client.interface.js';
import { redisKey } from './redis-keys.js';
import {
  BLOCK_WINDOW_UNLESS_BLOCKED,
  LEASE,
  ScriptRunner,
  type Bucket,
  type Operation,
} from './script-runner.js';

/** A lease with a fleet count: instance i1, a 2 s window. */
const FLEET_LEASE: Operation = {
  script: 'lease',
  receipts: false,
  fleet: { id: 'i1', windowMs: 2_000 },
};

interface Sent {
  readonly command: 'evalsha' | 'eval';
  readonly numkeys: number;
  readonly args: string[];
}

/** A client that records what it is sent; `evalsha` fails with `noScript` while it is set. */
function recordingClient(reply: (numkeys: number, args: string[]) => unknown) {
  const sent: Sent[] = [];
  const state = { noScript: undefined as string | undefined };
  const client: RedisClient = {
    evalsha: (_sha, numkeys, ...args) => {
      sent.push({ command: 'evalsha', numkeys, args });
      return state.noScript === undefined
        ? Promise.resolve(reply(numkeys, args))
        : Promise.reject(new Error(state.noScript));
    },
    eval: (_source, numkeys, ...args) => {
      sent.push({ command: 'eval', numkeys, args });
      return Promise.resolve(reply(numkeys, args));
    },
    del: () => Promise.resolve(0),
  };
  return { client, sent, state };
}

/** Hash tag of a key: the text between its first `{` and the next `}`. */
const tagOf = (key: string) => /\{([^}]*)\}/.exec(key)?.[1];

const hot = (name: string): Bucket => ({
  redisKey: redisKey('p:', name),
  rate: 10,
  burst: 10,
  cost: 1,
  maxExtra: 5,
});
/** A lease reply for `n` buckets (admitted, 4 fields each, extras, then the fleet counts, epochs, loads and the paces' fields). */
const leaseReply = (n: number, fleet: boolean) => [
  1,
  ...Array.from({ length: n }, () => [1, 4, 0, 600]).flat(),
  ...Array<number>(n).fill(5),
  ...(fleet
    ? [
        ...Array<number>(n).fill(3),
        ...Array<string>(n).fill('~7'),
        ...Array<string>(n).fill('2.5'),
        ...Array<string>(n).fill('0'),
        ...Array<number>(n).fill(0),
        ...Array<number>(n).fill(0),
        ...Array<string>(n).fill('0'),
      ]
    : []),
];

describe('ScriptRunner: keys declared, one hash tag per bucket, NOSCRIPT by its code', () => {
  it('declares the fleet set of each leased bucket in KEYS, beside its bucket, with its hash tag', async () => {
    const { client, sent } = recordingClient(() => leaseReply(1, true));
    const runner = new ScriptRunner(client, true, '0');
    const answer = await runner.run(FLEET_LEASE, [hot('k')], 0);
    expect(answer.instances).toEqual([3]);
    expect(answer.epochs).toEqual(['~7']);
    expect(answer.loads).toEqual([2.5]);
    const [{ numkeys, args }] = sent as [Sent];
    expect(numkeys).toBe(2);
    const keys = args.slice(0, numkeys);
    expect(keys).toEqual([redisKey('p:', 'k'), `${redisKey('p:', 'k')}:fleet`]);
    expect(new Set(keys.map(tagOf)).size).toBe(1);
    // 'f' in the receipts' place; the instance id and the window follow the per-key
    // arguments, then each bucket's join, the epoch it was last told (none yet), its weight and
    // the pace it asks (none).
    expect(args[numkeys + 2]).toBe('f');
    expect(args.slice(-6)).toEqual(['i1', '2000', '0', '', '0', '']);
  });

  it("declares the block mark of each anchored window it blocks in KEYS, with the window key's hash tag", async () => {
    const { client, sent } = recordingClient(() => [0, 1, 0, 0, 5000, 0, 0, 0, 5000, 5000, 5000]);
    const runner = new ScriptRunner(client, true, '0');
    const window = (name: string): Bucket => ({
      redisKey: redisKey('p:', name),
      rate: 0,
      burst: 3,
      cost: 5_000,
      spec: 'a10000',
    });
    const answer = await runner.run(BLOCK_WINDOW_UNLESS_BLOCKED, [window('a'), window('b')], 0);
    expect(answer.decisions[1]).toMatchObject({ effectiveWindowMs: 5000 });
    const [{ numkeys, args }] = sent as [Sent];
    expect(numkeys).toBe(4);
    const keys = args.slice(0, numkeys);
    const [a, b] = [redisKey('p:', 'a'), redisKey('p:', 'b')];
    expect(keys).toEqual([a, b, `${a}:block`, `${b}:block`]);
    expect(tagOf(keys[2]!)).toBe(tagOf(a));
    expect(tagOf(keys[3]!)).toBe(tagOf(b));
    // now, padding, unless blocked, then spec, quota, duration per key.
    expect(args.slice(numkeys)).toEqual([
      '0',
      '0',
      '1',
      'a10000',
      '3',
      '5000',
      'a10000',
      '3',
      '5000',
    ]);
  });

  it('declares only the buckets without a fleet count, and asks no count of a lone lease of nothing', async () => {
    const { client, sent } = recordingClient(() => leaseReply(2, false));
    const runner = new ScriptRunner(client, true, '0');
    await runner.run(LEASE, [hot('a'), hot('b')], 0);
    expect(sent[0]!.numkeys).toBe(2);
    expect(sent[0]!.args.slice(0, 2)).toEqual([redisKey('p:', 'a'), redisKey('p:', 'b')]);
  });

  it.each([
    ['Redis 7', 'NOSCRIPT No matching script. Please use EVAL.'],
    ['Valkey 8', 'NOSCRIPT No matching script.'],
    ['Valkey GLIDE', 'An error was signalled by the server: - NoScriptError: No matching script.'],
  ])(
    'answers a NOSCRIPT reply (%s) with one EVAL of the same keys and arguments',
    async (_server, text) => {
      expect(isNoScript(new Error(text))).toBe(true);
      const { client, sent, state } = recordingClient(() => leaseReply(1, true));
      state.noScript = text;
      const runner = new ScriptRunner(client, true, '0');
      const answer = await runner.run(FLEET_LEASE, [hot('k')], 0);
      expect(answer.allowed).toBe(true);
      expect(sent.map((s) => s.command)).toEqual(['evalsha', 'eval']);
      expect(sent[1]!.numkeys).toBe(sent[0]!.numkeys);
      expect(sent[1]!.args).toEqual(sent[0]!.args);
      expect(runner.reloads).toBe(1);
    },
  );

  it('passes any other error on, without an EVAL (the script is not run twice)', async () => {
    const { client, sent, state } = recordingClient(() => leaseReply(1, false));
    state.noScript = 'ERR user_script:1: NOSCRIPT in a message';
    const runner = new ScriptRunner(client, true, '0');
    await expect(runner.run(LEASE, [hot('k')], 0)).rejects.toThrow(/ERR user_script/);
    expect(sent.map((s) => s.command)).toEqual(['evalsha']);
    expect(runner.reloads).toBe(0);
  });
});
