/**
 * @jest-config-loader-options {"transpileOnly": true, "ignoreDiagnostics": [5110]}
 *
 * Jest loads this file through ts-node, which type-checks it by default: ~4 s
 * on every jest start, most of a unit run. Transpiled only, it is type-checked
 * by `npm run typecheck` instead (tsconfig.json includes it). 5110: jest
 * compiles it to CommonJS, which tsconfig's moduleResolution NodeNext refuses;
 * without type-checking there is no module resolution for it to matter.
 */
import type { Config } from 'jest';

/**
 * ESM jest (run with NODE_OPTIONS=--experimental-vm-modules, as the npm
 * scripts do). ts-jest transpiles each file on its own (isolatedModules): type
 * errors are caught by `npm run typecheck`, which `npm test` runs first.
 *
 * Three projects; `jest` alone runs all of them (`npm test`), `--selectProjects`
 * picks (`npm run test:unit`, `test:integration`, `test:fault`). A spec file
 * belongs to exactly one project: `fault` if it matches FAULT, else `unit` or
 * `integration` by where it lives.
 */

/**
 * Specs that break, freeze or crowd Redis or the machine, starting their own
 * servers and processes; slow, and the most sensitive to a loaded machine.
 * Globs without <rootDir> (jest does not expand it after the `!` the other
 * projects put in front of these).
 */
const FAULT = [
  // kill (SIGKILL), freeze (SIGSTOP), SCRIPT FLUSH or OOM their own redis-server
  '**/*faults*.{spec,e2e-spec}.ts', // two-tier.store.faults.spec.ts among them: TwoTierStore's Redis killed, frozen, refusing writes
  '**/test/redis-fail-mode/*.e2e-spec.ts',
  '**/test/reliability/fault-matrix.e2e-spec.ts', // every store × fail mode × Redis fault, each cell its own server
  '**/test/reliability/shutdown.e2e-spec.ts', // pauses its own redis-server while the application closes
  '**/test/two-tier/two-tier-fail-mode.e2e-spec.ts',
  '**/test/events/events-faults.e2e-spec.ts', // store failure, recovery and fallback events: kills and restarts its own Redis
  '**/test/health/health-faults.e2e-spec.ts', // the terminus indicator down and up again: kills and restarts its own Redis
  // several Node processes (forked workers on the built package) against one Redis
  '**/multi-process.e2e-spec.ts',
  // a 3-master Redis Cluster (plus a standalone server of their own)
  '**/adapters/{redis,two-tier}/*.cluster.spec.ts', // RedisStore and its leases across slots, redis-slots, a two-tier fleet's owed tokens across slots
  // 1,000,000 keys, consume pauses timed against a bound, heap growth: ~20 s, timing-sensitive
  '**/adapters/memory/memory.store.scale.spec.ts',
];
const notFault = FAULT.map((glob) => `!${glob}`);

/**
 * Specs beside their source and the guard's unit specs: no HTTP app, no child
 * process, no Redis of their own beyond a throw-away server or the shared
 * one (REDIS_URL, from the shared globalSetup); the whole project runs in
 * well under a minute.
 */
const UNIT = [
  '<rootDir>/lib/**/*.spec.ts',
  '<rootDir>/adapters/memory/**/*.spec.ts',
  // The stores' core specs (their Cluster, load and Redis-fault parts are in FAULT)
  '<rootDir>/adapters/redis/{redis.store,redis.store.lease}.spec.ts',
  '<rootDir>/adapters/two-tier/two-tier.store.spec.ts',
  // TwoTierStore's parts that need no Redis (a manual clock, a recording give-back queue)
  '<rootDir>/adapters/two-tier/{lease-sizing,deny-cache,key-table,lease-book,two-tier.options}.spec.ts',
  // RateLimitGuard and RateLimitInterceptor through a Nest testing module and a ManualClock (test/utils/guard-harness.ts)
  '<rootDir>/test/guard/**/*.spec.ts',
];
/** The same, as exclusions for the integration project (it takes the rest of adapters/ and test/). */
const notUnit = UNIT.filter(
  (glob) => !glob.startsWith('<rootDir>/lib/') && !glob.startsWith('<rootDir>/adapters/memory/'),
).map((glob) => `!${glob.replace('<rootDir>', '**')}`);

/**
 * Nest apps over real HTTP (Express and Fastify), the stores against the
 * shared redis-server, the packed package in CommonJS consumers (child
 * processes, npm install) and under arethetypeswrong (test/package), the
 * README's TypeScript snippets compiled against dist/ (test/readme), and the
 * closed-loop AIMD simulation: everything under test/, and the Redis and
 * two-tier store specs.
 */
/**
 * @nestjs/throttler's own test suite (test/throttler-compat/, import lines
 * changed to nestjs-holdup/throttler-compat), run against the built package
 * (dist/, `npm run build` first; `npm test` does it). Throttler's specs sleep
 * through its windows on the real clock: ~2.5 min in all.
 */
const THROTTLER = ['<rootDir>/test/throttler-compat/**/*.e2e-spec.ts'];

const INTEGRATION = [
  '<rootDir>/test/**/*.{spec,e2e-spec}.ts',
  '<rootDir>/adapters/redis/**/*.spec.ts',
  '<rootDir>/adapters/two-tier/**/*.spec.ts',
  '<rootDir>/sample-app/**/*.{spec,e2e-spec}.ts',
];

const base = {
  preset: 'ts-jest/presets/default-esm',
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^nestjs-holdup$': '<rootDir>/lib/index.ts',
    '^nestjs-holdup/algorithms$': '<rootDir>/lib/algorithms/index.ts',
    '^nestjs-holdup/redis$': '<rootDir>/adapters/redis/index.ts',
    '^nestjs-holdup/two-tier$': '<rootDir>/adapters/two-tier/index.ts',
    '^nestjs-holdup/terminus$': '<rootDir>/lib/terminus/index.ts',
    '^nestjs-holdup/graphql$': '<rootDir>/lib/graphql/index.ts',
    '^nestjs-holdup/store$': '<rootDir>/lib/store/index.ts',
    '^nestjs-holdup/observability$': '<rootDir>/lib/observability/index.ts',
    '^nestjs-holdup/adaptive$': '<rootDir>/lib/adaptive/index.ts',
    '^nestjs-holdup/throttler-compat$': '<rootDir>/lib/throttler-compat/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // mercurius -> @fastify/static requires content-disposition 3, which is ESM only: Node 20
    // loads it (require(esm)), jest's module runtime cannot before Node 24.9. Version 2, CommonJS
    // with the same API, serves it in tests (GraphiQL's static files, which no test fetches); express resolves the same one.
    '^content-disposition$': '<rootDir>/node_modules/content-disposition/dist/index.js',
  },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }],
  },
};

/**
 * One shared redis-server (REDIS_URL) for every project (the unit project's
 * store specs use it too), unless REDIS_URL is already set. Jest runs a
 * project's globalSetup only when tests of that project run, and a module
 * shared by several projects once.
 */
const sharedRedis = {
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
};

const config: Config = {
  testTimeout: 30_000,
  projects: [
    {
      ...base,
      ...sharedRedis,
      displayName: { name: 'unit', color: 'green' },
      roots: ['<rootDir>/lib', '<rootDir>/adapters', '<rootDir>/test/guard'],
      testMatch: [...UNIT, ...notFault],
    },
    {
      ...base,
      ...sharedRedis,
      displayName: { name: 'integration', color: 'blue' },
      roots: ['<rootDir>/test', '<rootDir>/adapters', '<rootDir>/sample-app'],
      testMatch: [...INTEGRATION, ...notFault, ...notUnit, '!**/test/throttler-compat/**'],
    },
    {
      ...base,
      displayName: { name: 'throttler', color: 'yellow' },
      roots: ['<rootDir>/test/throttler-compat'],
      testMatch: THROTTLER,
      // Fastify binds `::` as Express does: the error-message spec expects the
      // client `::1`, which a host whose localhost is IPv4 only never gives.
      setupFiles: ['<rootDir>/test/throttler-compat/fastify-dual-stack.setup.ts'],
      moduleNameMapper: {
        ...base.moduleNameMapper,
        '^nestjs-holdup/throttler-compat$': '<rootDir>/dist/esm/lib/throttler-compat/index.js',
      },
    },
    {
      ...base,
      ...sharedRedis,
      displayName: { name: 'fault', color: 'magenta' },
      roots: ['<rootDir>/test', '<rootDir>/adapters'],
      testMatch: FAULT,
    },
  ],
};

export default config;
