// A redis-server of the bench's own on loopback (no persistence): a free
// port, the server pinned to one core where `taskset` exists, ready once it
// says so. Shared by bench/redis (the Redis section and its Lua cost
// breakdown) and bench/fleet (unpinned: its workers need the cores).
import { execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import os from 'node:os';

const REDIS_SERVER = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Redis on one core of its own choosing, as the harness ran it:
 * `taskset -c <core> redis-server ...`, the core BENCH_REDIS_CORE or else the
 * machine's last one (Node is left to the scheduler). Without `taskset`
 * Redis runs unpinned, and the result says so.
 */
function pinning() {
  const core = Number(process.env.BENCH_REDIS_CORE ?? (os.availableParallelism?.() ?? 1) - 1);
  try {
    execFileSync('taskset', ['-c', String(core), 'true']);
    return {
      command: 'taskset',
      prefix: ['-c', String(core)],
      pinnedTo: `core ${core} (taskset -c ${core} redis-server ...)`,
    };
  } catch {
    return { pinnedTo: 'not pinned (no taskset)' };
  }
}
export const PINNING = pinning();

/** Starts redis-server on `port` (pinned unless `pinned: false`); resolves with the child once ready. */
export function startRedisServer(port, { pinned = true } = {}) {
  const args = [
    ...['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    ...['--protected-mode', 'no'],
  ];
  const pin = pinned && PINNING.command !== undefined;
  const child = spawn(
    pin ? PINNING.command : REDIS_SERVER,
    pin ? [...PINNING.prefix, REDIS_SERVER, ...args] : args,
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start\n${out}`)), 10_000);
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (/Ready to accept connections/.test(out)) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}\n${out}`)));
  });
}
