/**
 * The import graph of the library (lib/ and adapters/), checked by
 * `npm run lint:imports` (part of `npm test`). Spec files are left out: they
 * import test helpers and every layer, and nothing imports them.
 *
 * Type-only imports count (tsPreCompilationDeps): a cycle made of types is
 * still a cycle for the reader and for the declaration files.
 *
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles in lib/ and adapters/, type-only imports included.',
      from: { path: '^(lib|adapters)/' },
      to: {
        circular: true,
      },
    },
    {
      name: 'interfaces-at-the-bottom',
      severity: 'error',
      comment:
        'Option and resolved-option types (lib/interfaces/) import only each other, lib/algorithms/, lib/util/, lib/clock.ts and the store contract: never the code that reads them.',
      from: { path: '^lib/interfaces/' },
      to: {
        path: '^(lib|adapters)/',
        pathNot: [
          '^lib/(interfaces|algorithms|util)/',
          '^lib/clock\\.ts$',
          '^lib/store/(rate-limit-store\\.interface|concurrency-slots\\.interface|horizon)\\.ts$',
        ],
      },
    },
    {
      name: 'lib-not-to-adapters',
      severity: 'error',
      comment:
        'lib/ knows stores only through the store contract (lib/store/); the one adapter it may import is the default store, adapters/memory/.',
      from: { path: '^lib/' },
      to: { path: '^adapters/', pathNot: '^adapters/memory/' },
    },
    {
      name: 'adapters-only-to-lib',
      severity: 'error',
      comment:
        'An adapter imports lib/ (and other adapters as the rules below allow), never test/, sample-app/, bench/ or scripts/.',
      from: { path: '^adapters/' },
      to: { path: '^(test|sample-app|bench|scripts)/' },
    },
    {
      name: 'memory-stands-alone',
      severity: 'error',
      comment: 'The memory store imports no other adapter.',
      from: { path: '^adapters/memory/' },
      to: { path: '^adapters/', pathNot: '^adapters/memory/' },
    },
    {
      name: 'redis-stands-alone',
      severity: 'error',
      comment: 'The Redis store imports no other adapter.',
      from: { path: '^adapters/redis/' },
      to: { path: '^adapters/', pathNot: '^adapters/redis/' },
    },
    {
      name: 'two-tier-composes-memory-and-redis',
      severity: 'error',
      comment: 'The two-tier store may compose the memory and the Redis stores, nothing else.',
      from: { path: '^adapters/two-tier/' },
      to: { path: '^adapters/', pathNot: '^adapters/(two-tier|memory|redis)/' },
    },
  ],
  options: {
    exclude: { path: '\\.(e2e-)?spec\\.ts$' },
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.d.ts'],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
