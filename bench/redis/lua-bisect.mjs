// Where consume_one's time goes inside Redis, by cutting the script short
// (issue 27, one request at a time). Not part of `npm run bench` (a diagnosis):
//
//   npm run build && node bench/redis/lua-bisect.mjs [calls] [rounds]
//
// Starts its own redis-server pinned like bench/redis, then runs, one call at
// a time over 10k keys, rounds alternated, `consume_one` and prefixes of it
// (each ending in `return 1`), on client time (no TIME) unless named
// "server time", and prints the median EVALSHA usec_per_call (INFO
// commandstats) of each: the difference between two lines is what the part
// between the two cuts costs.
import { Redis } from 'ioredis';
import { freePort, PINNING, startRedisServer } from '../lib/redis-server.mjs';
import { SCRIPTS } from '../../dist/esm/adapters/redis/scripts/index.js';

const CALLS = Number(process.argv[2] ?? 10_000);
const ROUNDS = Number(process.argv[3] ?? 5);
const base = SCRIPTS.consume_one.source;
const cut = (marker) => {
  const at = base.indexOf(marker);
  if (at < 0) throw new Error(`no ${marker} in consume_one`);
  return `${base.slice(0, at)}\nreturn 1`;
};
const CASES = {
  'consume_one, server time': [base, false],
  'consume_one, client time': [base, true],
  'header only (empty script)': [cut('local TOKEN_EPSILON'), true],
  '+ frame (constants, time)': [cut('local key = KEYS[1]'), true],
  '+ rate, burst, cost': [cut('-- read: the stored'), true],
  '+ GET and parse': [cut('-- consume (gcraConsume)'), true],
  '+ GCRA arithmetic': [cut('-- write (gcra.lua.ts'), true],
  '+ write (format, SET PX)': [cut('local allowed = 0'), true],
};

const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];

async function main() {
  const port = await freePort();
  const child = await startRedisServer(port);
  const client = new Redis({ port, host: '127.0.0.1' });
  try {
    const shas = {};
    for (const [name, [source]] of Object.entries(CASES))
      shas[name] = await client.script('LOAD', source);
    const results = Object.fromEntries(Object.keys(CASES).map((name) => [name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      const names = Object.keys(CASES);
      for (const name of round % 2 ? names.reverse() : names) {
        const clientTime = CASES[name][1];
        await client.config('RESETSTAT');
        for (let i = 0; i < CALLS; i++) {
          const key = `bisect:{user-${(i * 7919) % 10_000}}`;
          const now = clientTime ? String(Date.now()) : '';
          await client.evalsha(shas[name], 1, key, now, '0', '0', '1000000', '1000000000', '1');
        }
        const info = await client.info('commandstats');
        results[name].push(Number(/cmdstat_evalsha:[^\r\n]*usec_per_call=([\d.]+)/.exec(info)[1]));
      }
    }
    console.log(
      `Redis ${PINNING.pinnedTo}; EVALSHA usec_per_call, ${CALLS} calls one at a time x ${ROUNDS} rounds, median:`,
    );
    for (const [name, values] of Object.entries(results))
      console.log(`  ${name.padEnd(30)} ${median(values).toFixed(2)} µs  (${values.join(', ')})`);
  } finally {
    client.disconnect();
    child.kill('SIGTERM');
  }
}

await main();
