import type { RedisServer } from './utils/redis-harness.js';

/** Jest global teardown: stops the server global setup started (by PID), if any. */
export default async function globalTeardown(): Promise<void> {
  const holder = globalThis as { __HOLDUP_REDIS__?: RedisServer };
  const server = holder.__HOLDUP_REDIS__;
  if (!server) return;
  holder.__HOLDUP_REDIS__ = undefined;
  delete process.env.REDIS_URL;
  await server.stop();
}
