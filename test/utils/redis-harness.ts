/**
 * Real Redis for the tests: no Docker, no mocks.
 *
 * - `startRedisServer()` runs a throw-away `redis-server` on a free loopback
 *   port, in a temporary directory, with persistence off. Jest's global setup
 *   starts one shared server this way and exports `REDIS_URL`; fault tests
 *   start their own, since they kill or freeze it.
 * - `startRedisCluster()` runs a 3-master Redis Cluster on loopback ports.
 * - Every server started here dies with the process that started it, even
 *   if a test forgets to stop it or the process is killed (see GUARDIAN).
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const HOST = '127.0.0.1';
const START_TIMEOUT_MS = 10_000;

/** A redis-server process started by this harness. */
export interface RedisServer {
  readonly host: string;
  readonly port: number;
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  /** PID of the current process (changes after {@link restart}). */
  readonly pid: number;
  /** Working directory (removed by {@link stop}). */
  readonly dir: string;
  /** Freeze the server (SIGSTOP): connections stay open, nothing is answered. */
  pause(): void;
  /** Thaw a paused server (SIGCONT). */
  resume(): void;
  /** SIGKILL, and wait until the process is gone. */
  kill(): Promise<void>;
  /** Start it again on the same port and directory (after {@link kill}). */
  restart(): Promise<void>;
  /** Kill it (if running) and remove its directory. Idempotent. */
  stop(): Promise<void>;
}

/** A Redis Cluster started by this harness. */
export interface RedisClusterHandle {
  readonly nodes: readonly RedisServer[];
  /** Startup nodes for ioredis `new Cluster(...)`. */
  readonly startupNodes: readonly { host: string; port: number }[];
  stop(): Promise<void>;
}

/**
 * redis-server runs behind a tiny `sh` guardian: the guardian starts it in the
 * background, prints its PID, and waits for it; a reader it forks blocks on
 * the guardian's stdin, a pipe from this process. However this process ends
 * (normal exit, crash, SIGKILL, a jest worker torn down), the pipe closes, the
 * reader wakes up and kills redis-server: no orphan servers. When
 * redis-server ends, the guardian ends too, which is how its exit is seen.
 */
const GUARDIAN = [
  'exec 3<&0',
  '"$0" "$@" 3<&- &',
  'pid=$!',
  'echo "$pid"',
  '( read _ignored <&3; kill -9 "$pid" 2>/dev/null ) &',
  'reader=$!',
  'wait "$pid"',
  'kill "$reader" 2>/dev/null',
  'exit 0',
].join('\n');

/** One run of redis-server under its guardian. */
interface Instance {
  readonly guardian: ChildProcess;
  /** PID of redis-server itself (signals go there). */
  readonly pid: number;
  /** Resolves when redis-server has exited (and been reaped). */
  readonly exited: Promise<void>;
  hasExited(): boolean;
}

export function spawnGuarded(binary: string, args: readonly string[]): Promise<Instance> {
  const guardian = spawn('/bin/sh', ['-c', GUARDIAN, binary, ...args], {
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  guardian.unref();
  (guardian.stdin as unknown as net.Socket).unref();
  let done = false;
  const exited = new Promise<void>((resolve) =>
    guardian.once('exit', () => {
      done = true;
      resolve();
    }),
  );
  return new Promise((resolve, reject) => {
    let output = '';
    guardian.once('error', reject);
    guardian.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const newline = output.indexOf('\n');
      if (newline === -1) return;
      guardian.stdout!.destroy();
      resolve({ guardian, pid: Number(output.slice(0, newline)), exited, hasExited: () => done });
    });
    void exited.then(() =>
      reject(new Error(`${path.basename(binary)} guardian exited before reporting a PID`)),
    );
  });
}

export function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  for (const dir of ['/usr/bin', '/usr/local/bin', '/usr/sbin', '/opt/homebrew/bin']) {
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

const INSTALL_HINT =
  'redis-server was not found on PATH: install Redis 7+ (e.g. `sudo apt-get install redis-server` or `brew install redis`), or set REDIS_URL to a running Redis for the shared tests.';

let binaries: { server: string; cli: string } | undefined;

/**
 * Paths of `redis-server` and `redis-cli`. When missing and running as root
 * with apt-get available, installs the `redis-server` package; otherwise
 * throws one sentence saying how to install it.
 */
export function redisBinaries(): { server: string; cli: string } {
  if (binaries) return binaries;
  let server = onPath('redis-server');
  if (!server && process.getuid?.() === 0 && onPath('apt-get')) {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    spawnSync('apt-get', ['update'], { stdio: 'inherit', env });
    spawnSync('apt-get', ['install', '-y', 'redis-server'], { stdio: 'inherit', env });
    server = onPath('redis-server');
  }
  if (!server) throw new Error(INSTALL_HINT);
  const cli = onPath('redis-cli') ?? path.join(path.dirname(server), 'redis-cli');
  binaries = { server, cli };
  return binaries;
}

/** A TCP port free on the loopback interface right now (bind port 0, read, release). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen(0, HOST, () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => (port ? resolve(port) : reject(new Error('could not find a free port'))));
    });
  });
}

/**
 * Sends one command over a fresh connection and returns the first reply line
 * (simple string, error, integer) or bulk string. Enough for PING, INFO,
 * CLUSTER INFO and the like, without a client library.
 */
export function rawCommand(
  port: number,
  args: readonly string[],
  timeoutMs = 2_000,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: HOST, port });
    let buffer = Buffer.alloc(0);
    const done = (error: Error | undefined, value?: string) => {
      socket.destroy();
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(value!);
    };
    const timer = setTimeout(
      () => done(new Error(`no reply from 127.0.0.1:${port} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    timer.unref();
    socket.once('error', (error) => done(error));
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      const lineEnd = buffer.indexOf('\r\n');
      if (lineEnd === -1) return;
      const type = String.fromCharCode(buffer[0]!);
      const line = buffer.subarray(1, lineEnd).toString();
      if (type === '-') return done(new Error(line));
      if (type !== '$') return done(undefined, line);
      const length = Number(line);
      if (length < 0) return done(undefined, '');
      if (buffer.length < lineEnd + 2 + length + 2) return;
      done(undefined, buffer.subarray(lineEnd + 2, lineEnd + 2 + length).toString());
    });
    socket.write(
      args
        .map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`)
        .reduce((acc, part) => acc + part, `*${args.length}\r\n`),
    );
  });
}

/** Polls PING until PONG (or `timeoutMs`). */
export async function waitForPing(
  port: number,
  timeoutMs = START_TIMEOUT_MS,
  exited?: () => boolean,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    if (exited?.()) throw new Error(`redis-server on port ${port} exited during start-up`);
    try {
      if ((await rawCommand(port, ['PING'], 1_000)) === 'PONG') return;
    } catch (error) {
      last = error;
    }
    await sleep(20);
  }
  throw new Error(
    `redis-server on port ${port} did not answer PING within ${timeoutMs} ms (${String(last)})`,
  );
}

/** Options of {@link startRedisServer}. */
export interface StartRedisServerOptions {
  /** Fixed port; by default a free one is found (and retried if taken meanwhile). */
  readonly port?: number;
  /** Extra `redis-server` arguments, e.g. `['--cluster-enabled', 'yes']`. */
  readonly args?: readonly string[];
}

/** Starts a throw-away redis-server on loopback (no persistence, temp dir). */
export async function startRedisServer(
  options: StartRedisServerOptions = {},
): Promise<RedisServer> {
  const { server: binary } = redisBinaries();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'holdup-redis-'));
  const attempts = options.port === undefined ? 5 : 1;
  let lastError: unknown;
  for (let attempt = 0; attempt < attempts; attempt++) {
    const port = options.port ?? (await freePort());
    const launch = async (): Promise<Instance> => {
      const instance = await spawnGuarded(binary, [
        '--port',
        String(port),
        '--bind',
        HOST,
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
        '--daemonize',
        'no',
        '--logfile',
        path.join(dir, 'redis.log'),
        ...(options.args ?? []),
      ]);
      try {
        await waitForPing(port, START_TIMEOUT_MS, () => instance.hasExited());
        // The port was free when picked, but another process may have taken
        // it since (parallel test runs): make sure the answer came from ours.
        const info = await rawCommand(port, ['INFO', 'server']);
        if (!info.includes(`process_id:${instance.pid}\r\n`)) {
          throw new Error(`port ${port} is answered by another redis-server than the one started`);
        }
      } catch (error) {
        await killInstance(instance);
        throw error;
      }
      return instance;
    };
    try {
      let instance = await launch();
      let stopped = false;
      const handle: RedisServer = {
        host: HOST,
        port,
        url: `redis://${HOST}:${port}`,
        dir,
        get pid() {
          return instance.pid;
        },
        pause: () => process.kill(instance.pid, 'SIGSTOP'),
        resume: () => process.kill(instance.pid, 'SIGCONT'),
        kill: () => killInstance(instance),
        restart: async () => {
          await killInstance(instance);
          instance = await launch();
        },
        stop: async () => {
          if (stopped) return;
          stopped = true;
          await killInstance(instance);
          rmSync(dir, { recursive: true, force: true });
        },
      };
      return handle;
    } catch (error) {
      lastError = error;
    }
  }
  rmSync(dir, { recursive: true, force: true });
  throw lastError;
}

/** SIGKILL redis-server (frozen or not) and wait until its guardian has reaped it. */
async function killInstance(instance: Instance): Promise<void> {
  if (!instance.hasExited()) {
    try {
      process.kill(instance.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  instance.guardian.stdin?.end();
  // The guardian is unref()'d so that a forgotten server never holds a test
  // process open; while it is awaited here it must be held, or a process with
  // nothing else to do (jest's global teardown) exits at once, with code 0,
  // before jest has set the run's failure code.
  instance.guardian.ref();
  await instance.exited;
}

/** Starts `masters` cluster-enabled servers and joins them with `redis-cli --cluster create`. */
export async function startRedisCluster(
  options: { masters?: number } = {},
): Promise<RedisClusterHandle> {
  const masters = options.masters ?? 3;
  const { cli } = redisBinaries();
  const nodes: RedisServer[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.stop()));
  };
  try {
    for (let i = 0; i < masters; i++) {
      // The cluster bus port is set explicitly (Redis 7): port + 10000 might
      // be taken or out of range.
      const busPort = await freePort();
      nodes.push(
        await startRedisServer({
          args: [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            'nodes.conf',
            '--cluster-node-timeout',
            '5000',
            '--cluster-port',
            String(busPort),
          ],
        }),
      );
    }
    await new Promise<void>((resolve, reject) => {
      execFile(
        cli,
        [
          '--cluster',
          'create',
          ...nodes.map((node) => `${HOST}:${node.port}`),
          '--cluster-replicas',
          '0',
          '--cluster-yes',
        ],
        { timeout: 30_000 },
        (error, stdout, stderr) =>
          error
            ? reject(
                new Error(
                  `redis-cli --cluster create failed: ${stderr || stdout || error.message}`,
                ),
              )
            : resolve(),
      );
    });
    // Every node must know the whole slot map before clients connect.
    const deadline = Date.now() + 15_000;
    for (const node of nodes) {
      for (;;) {
        const info = await rawCommand(node.port, ['CLUSTER', 'INFO']);
        if (info.includes('cluster_state:ok') && info.includes('cluster_slots_ok:16384')) break;
        if (Date.now() > deadline) throw new Error(`cluster node ${node.port} not ready: ${info}`);
        await sleep(50);
      }
    }
    return {
      nodes,
      startupNodes: nodes.map((node) => ({ host: node.host, port: node.port })),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The shared server's URL, set by jest's global setup (or by the user). */
export function sharedRedisUrl(): string {
  const url = process.env.REDIS_URL;
  if (!url)
    throw new Error(
      'REDIS_URL is not set: run the tests through jest (its globalSetup starts a redis-server).',
    );
  return url;
}

/** A key prefix unique to this process and call, so parallel workers and runs never share keys. */
export function uniquePrefix(label: string): string {
  return `test:${label}:${process.pid}:${Date.now().toString(36)}:${Math.random().toString(36).slice(2, 8)}:`;
}
