/**
 * A real Prometheus server for the tests (Debian's `prometheus` package, as
 * `redis-server` is for Redis): started on a free loopback port with its own
 * configuration and temporary storage, scraping the given targets, under
 * the same guardian as the harness's redis-server (it dies with the process
 * that started it). Queried through its HTTP API.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, onPath, spawnGuarded } from './redis-harness.js';

const INSTALL_HINT =
  'prometheus was not found on PATH: install it (e.g. `sudo apt-get install prometheus` on Debian/Ubuntu, `brew install prometheus` on macOS); ' +
  'the observability end-to-end test scrapes the sample app with a real Prometheus server.';

/** One value of an instant query's vector. */
export interface Sample {
  readonly metric: Record<string, string>;
  readonly value: number;
}

/** A running Prometheus. */
export interface PrometheusServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** An instant query (`/api/v1/query`); throws on a query error. */
  query(expression: string): Promise<Sample[]>;
  /** A range query (`/api/v1/query_range`), one series per label set, `[seconds, value]` points. */
  queryRange(
    expression: string,
    startSeconds: number,
    endSeconds: number,
    stepSeconds: number,
  ): Promise<{ metric: Record<string, string>; values: [number, number][] }[]>;
  /** Resolves when every target has been scraped successfully at least once since `sinceMs`. */
  scrapedSince(sinceMs: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** The `prometheus` binary; installed with apt-get when missing and running as root, else an error saying how. */
export function prometheusBinary(): string {
  let binary = onPath('prometheus');
  if (!binary && process.getuid?.() === 0 && onPath('apt-get')) {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    spawnSync('apt-get', ['update'], { stdio: 'inherit', env });
    spawnSync('apt-get', ['install', '-y', 'prometheus'], { stdio: 'inherit', env });
    binary = onPath('prometheus');
  }
  if (!binary) throw new Error(INSTALL_HINT);
  return binary;
}

/** Starts Prometheus scraping `targets` (`host:port`, path `/metrics`) every `scrapeIntervalSeconds`. */
export async function startPrometheus(
  targets: readonly string[],
  scrapeIntervalSeconds = 1,
): Promise<PrometheusServer> {
  const binary = prometheusBinary();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'holdup-prometheus-'));
  const config = path.join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    [
      'global:',
      `  scrape_interval: ${scrapeIntervalSeconds}s`,
      `  evaluation_interval: ${scrapeIntervalSeconds}s`,
      'scrape_configs:',
      '  - job_name: app',
      '    static_configs:',
      `      - targets: [${targets.map((t) => `'${t}'`).join(', ')}]`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const instance = await spawnGuarded(binary, [
    `--config.file=${config}`,
    `--storage.tsdb.path=${path.join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    '--log.level=warn',
  ]);
  const api = async <T>(endpoint: string, params: Record<string, string>): Promise<T> => {
    const response = await fetch(`${url}/api/v1/${endpoint}?${new URLSearchParams(params)}`);
    const body = (await response.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success')
      throw new Error(`Prometheus ${endpoint} ${JSON.stringify(params)}: ${body.error}`);
    return body.data;
  };
  await waitUntil(
    async () => (await fetch(`${url}/-/ready`).catch(() => undefined))?.ok === true,
    30_000,
    `Prometheus on ${url} to be ready`,
  );
  return {
    url,
    async query(expression) {
      const data = await api<{
        result: { metric: Record<string, string>; value: [number, string] }[];
      }>('query', { query: expression });
      return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    async queryRange(expression, start, end, step) {
      const data = await api<{
        result: { metric: Record<string, string>; values: [number, string][] }[];
      }>('query_range', {
        query: expression,
        start: String(start),
        end: String(end),
        step: String(step),
      });
      return data.result.map((r) => ({
        metric: r.metric,
        values: r.values.map(([t, v]) => [t, Number(v)] as [number, number]),
      }));
    },
    async scrapedSince(sinceMs, timeoutMs = 20_000) {
      await waitUntil(
        async () => {
          const data = await api<{ activeTargets: { health: string; lastScrape: string }[] }>(
            'targets',
            { state: 'active' },
          );
          return (
            data.activeTargets.length > 0 &&
            data.activeTargets.every((t) => t.health === 'up' && Date.parse(t.lastScrape) > sinceMs)
          );
        },
        timeoutMs,
        'every target to be scraped',
      );
    },
    async stop() {
      if (!instance.hasExited()) process.kill(instance.pid, 'SIGKILL');
      await instance.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitUntil(
  condition: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition().catch(() => false)) return;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}
