import type { Redis } from 'ioredis';
import type { RedisServer } from '../utils/redis-harness.js';

/**
 * The ways a Redis fails in production, each as an action on a real
 * redis-server and its undoing. `admin` is a second connection, not the
 * store's, so that it can heal what it broke.
 */
export interface RedisFault {
  readonly name: string;
  /** What the store sees, for the test names. */
  readonly seen: string;
  apply(server: RedisServer, admin: Redis): Promise<void>;
  heal(server: RedisServer, admin: Redis): Promise<void>;
}

export const FAULTS: readonly RedisFault[] = [
  {
    name: 'killed',
    seen: 'connection refused',
    apply: (server) => server.kill(),
    heal: (server) => server.restart(),
  },
  {
    name: 'stopped',
    seen: 'no answer (SIGSTOP)',
    apply: async (server) => server.pause(),
    heal: async (server) => server.resume(),
  },
  {
    name: 'out of memory',
    seen: 'reads answered, writes refused (maxmemory, noeviction)',
    apply: async (_server, admin) => {
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      await admin.config('SET', 'maxmemory', '1');
    },
    heal: async (_server, admin) => {
      await admin.config('SET', 'maxmemory', '0');
    },
  },
  {
    name: 'read-only replica',
    seen: 'reads answered, writes refused (REPLICAOF a master that is gone)',
    apply: async (_server, admin) => {
      await admin.call('REPLICAOF', '127.0.0.1', '1');
    },
    heal: async (_server, admin) => {
      await admin.call('REPLICAOF', 'NO', 'ONE');
    },
  },
  {
    name: 'slow',
    seen: 'every command held for 600 ms (CLIENT PAUSE)',
    apply: async (_server, admin) => {
      await admin.call('CLIENT', 'PAUSE', '600', 'ALL');
    },
    heal: async (_server, admin) => {
      await admin.call('CLIENT', 'UNPAUSE');
    },
  },
];
