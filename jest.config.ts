import type { Config } from 'jest';

/**
 * ESM jest (run with NODE_OPTIONS=--experimental-vm-modules, as `npm test` does).
 * ts-jest transpiles each file on its own (isolatedModules): type errors are
 * caught by `npm run typecheck`, which `npm test` runs first.
 */
const config: Config = {
  preset: 'ts-jest/presets/default-esm',
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  roots: ['<rootDir>/lib', '<rootDir>/adapters', '<rootDir>/test', '<rootDir>/sample-app'],
  testMatch: ['**/*.spec.ts', '**/*.e2e-spec.ts'],
  moduleNameMapper: {
    '^nestjs-holdup$': '<rootDir>/lib/index.ts',
    '^nestjs-holdup/algorithms$': '<rootDir>/lib/algorithms/index.ts',
    '^nestjs-holdup/redis$': '<rootDir>/adapters/redis/index.ts',
    '^nestjs-holdup/two-tier$': '<rootDir>/adapters/two-tier/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }],
  },
  testTimeout: 30_000,
  // One shared redis-server for the Redis specs (REDIS_URL), unless REDIS_URL is already set.
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
};

export default config;
