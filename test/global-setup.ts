import { createRequire } from 'node:module';
import type { RedisServer } from './utils/redis-harness.js';

type Harness = typeof import('./utils/redis-harness.js');

/**
 * Jest global setup of every project (see jest.config.ts): one shared
 * redis-server for their test files, unless REDIS_URL already points at one.
 * Workers inherit REDIS_URL. Jest runs it once per run however many projects
 * run.
 *
 * Jest loads this file outside the test module system (no moduleNameMapper),
 * so the harness is required by its real `.ts` path, which jest's transform
 * hook compiles while this function runs.
 */
export default async function globalSetup(): Promise<void> {
  if (process.env.REDIS_URL) return;
  const harness = createRequire(import.meta.url)('./utils/redis-harness.ts') as Harness;
  const server = await harness.startRedisServer();
  process.env.REDIS_URL = server.url;
  (globalThis as { __HOLDUP_REDIS__?: RedisServer }).__HOLDUP_REDIS__ = server;
}
