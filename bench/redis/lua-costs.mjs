// Where RedisStore's script time goes inside Redis (issue 27), by Redis's own
// measure: `INFO commandstats` usec_per_call of EVALSHA, far less noisy than
// wall time on a shared machine. Not part of `npm run bench` (a diagnosis):
//
//   npm run build && node bench/redis/lua-costs.mjs [calls] [rounds]
//
// Starts its own redis-server (no persistence) pinned like bench/redis
// (`taskset -c <last core>`, BENCH_REDIS_CORE to choose), then:
//
// 1. Scripts, one request at a time over 10k keys, rounds alternated, median
//    usec_per_call: `consume_one` as RedisStore sends it; the same three
//    commands (TIME, GET, SET ... PXAT) with constant values and none of the
//    arithmetic; the two commands without TIME; an empty script (what any
//    EVALSHA costs); rate-limiter-flexible's script (SET NX, INCRBY, PTTL).
// 2. Pieces of Lua, each in a loop of 1000 inside one script: ns per piece
//    (usec_per_call of the loop minus that of an empty loop, / 1000).
import { Redis } from 'ioredis';
import { freePort, PINNING, startRedisServer } from '../lib/redis-server.mjs';
import { SCRIPTS } from '../../dist/esm/adapters/redis/scripts/index.js';

const CALLS = Number(process.argv[2] ?? 20_000);
const ROUNDS = Number(process.argv[3] ?? 3);

async function startRedis() {
  const port = await freePort();
  return { child: await startRedisServer(port), port, pinnedTo: PINNING.pinnedTo };
}

const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];

async function evalshaUsec(client) {
  const info = await client.info('commandstats');
  return Number(/cmdstat_evalsha:[^\r\n]*usec_per_call=([\d.]+)/.exec(info)[1]);
}

const SCRIPT_CASES = {
  consume_one: {
    source: SCRIPTS.consume_one.source,
    // As RedisStore sends it: server time, padding 0, no receipt, rate, burst, cost.
    args: ['', '0', '0', '1000000', '1000000000', '1'],
  },
  'three commands, constants': {
    source: `local t = redis.call('TIME')
local raw = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], '1764288000123:0.50000000000000001', 'PXAT', '1864288000000')
return { 1, 1, 5, 0, 7 }`,
    args: ['', '0', '0', '1000000', '1000000000', '1'],
  },
  'GET and SET only, constants': {
    source: `local raw = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], '1764288000123:0.50000000000000001', 'PXAT', '1864288000000')
return { 1, 1, 5, 0, 7 }`,
    args: ['', '0', '0', '1000000', '1000000000', '1'],
  },
  'empty script': { source: 'return 1', args: ['', '0', '0', '1000000', '1000000000', '1'] },
  'rate-limiter-flexible': {
    // RateLimiterRedis' script (rate-limiter-flexible 11, lib/RateLimiterRedis.js).
    source: `redis.call('set', KEYS[1], 0, 'EX', ARGV[2], 'NX')
local consumed = redis.call('incrby', KEYS[1], ARGV[1])
local ttl = redis.call('pttl', KEYS[1])
if ttl == -1 then
  redis.call('expire', KEYS[1], ARGV[2])
  ttl = 1000 * ARGV[2]
end
return {consumed, ttl}`,
    args: ['1', '60'],
  },
};

const LOOP = 1000;
const PIECES = {
  'string.format %.17g:%.17g (the stored value)': `local v = string.format('%.17g:%.17g', 1764288000123, 0.5 + i * 1e-7)`,
  "string.format %.17g (a reply's fraction)": `local v = string.format('%.17g', 0.5 + i * 1e-7)`,
  'string.format %.0f (the PXAT time)': `local v = string.format('%.0f', 1764288000123 + i)`,
  'read <base>:<offset> (find, 2 sub, 2 tonumber)': `local raw = '1764288000123:0.50000000000000001'
  local sep = string.find(raw, ':', 1, true)
  local base = tonumber(string.sub(raw, 1, sep - 1))
  local offset = tonumber(string.sub(raw, sep + 1))`,
  'tonumber of 3 ARGV (rate, burst, cost)': `local a, b, c = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])`,
  'redis.call TIME': `local t = redis.call('TIME')`,
  'redis.call TIME + frame and now': `local t = redis.call('TIME')
  local micros = tonumber(t[2])
  local frame = tonumber(t[1]) * 1000 + math.floor(micros / 1000)
  local now = (micros % 1000) / 1000`,
  'redis.call GET': `local v = redis.call('GET', KEYS[1])`,
  'redis.call SET ... PXAT (text time)': `redis.call('SET', KEYS[1], '1764288000123:0.50000000000000001', 'PXAT', '1864288000000')`,
  'redis.call SET ... PXAT (Lua number time)': `redis.call('SET', KEYS[1], '1764288000123:0.50000000000000001', 'PXAT', 1864288000000)`,
  'the GCRA arithmetic of an admission': `local interval = 1000 / 1000000
  local capacity = 1e9 * interval
  local slack = 1e-9 * interval + 1e-16
  local debt = (0.5 + i) - 0.25
  local rem = math.max(0, math.floor((capacity - debt + slack) / interval))
  local reset = math.min(capacity, math.max(0, debt))`,
  'a 5-field reply table': `local t = { 1, 1, 5, 0, 7.5 }`,
};

const { child, port, pinnedTo } = await startRedis();
const client = new Redis({ port, lazyConnect: false });
try {
  const keys = Array.from({ length: 10_000 }, (_, i) => `lua-costs:${(i * 7919) % 10_000}`);
  const shas = {};
  for (const [name, { source }] of Object.entries(SCRIPT_CASES))
    shas[name] = await client.script('LOAD', source);
  const usec = Object.fromEntries(Object.keys(SCRIPT_CASES).map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, { args }] of Object.entries(SCRIPT_CASES)) {
      const prefix = `${Object.keys(SCRIPT_CASES).indexOf(name)}:`;
      const call = (i) => client.evalsha(shas[name], 1, prefix + keys[i % keys.length], ...args);
      for (let i = 0; i < 2_000; i++) await call(i); // every key exists
      await client.config('RESETSTAT');
      for (let i = 0; i < CALLS; i++) await call(i);
      usec[name].push(await evalshaUsec(client));
    }
  }
  console.log(
    `Redis ${pinnedTo}; EVALSHA usec_per_call (INFO commandstats), ${CALLS} calls one at a time x ${ROUNDS} rounds, median:`,
  );
  for (const [name, values] of Object.entries(usec))
    console.log(`  ${name.padEnd(30)} ${median(values).toFixed(2)} µs  (${values.join(', ')})`);

  const empty = await client.script('LOAD', `for i = 1, ${LOOP} do end return 1`);
  const pieceShas = {};
  for (const [name, body] of Object.entries(PIECES))
    pieceShas[name] = await client.script('LOAD', `for i = 1, ${LOOP} do\n${body}\nend\nreturn 1`);
  const loopUsec = async (sha) => {
    await client.config('RESETSTAT');
    for (let j = 0; j < 20; j++)
      await client.evalsha(sha, 1, 'lua-costs:piece', '', '0', '0', '1000000', '1000000000', '1');
    return evalshaUsec(client);
  };
  const pieces = Object.fromEntries(Object.keys(PIECES).map((name) => [name, []]));
  const emptyRuns = [];
  for (let round = 0; round < 5; round++) {
    emptyRuns.push(await loopUsec(empty));
    for (const name of Object.keys(PIECES)) pieces[name].push(await loopUsec(pieceShas[name]));
  }
  console.log(`Pieces of Lua, each ${LOOP} times in one script, 5 rounds, median, ns per piece:`);
  for (const [name, values] of Object.entries(pieces))
    console.log(
      `  ${name.padEnd(48)} ${Math.round(((median(values) - median(emptyRuns)) / LOOP) * 1000)} ns`,
    );
} finally {
  client.disconnect();
  child.kill('SIGTERM');
}
