// The picture in docs/observability.md: the dashboard's series over a load
// run of the sample app, scraped by a real Prometheus and read back through
// its query_range API. Needs redis-server and prometheus on PATH.
//
//   node scripts/observability-figure.mjs      (~1.5 min) writes docs/observability-dashboard.svg
//
// Phases: calm (clients well under their limits), a burst (30 clients at 5x
// their limit, and 3x the quotes downstream's capacity, so the adaptive limit
// comes down), recovery (calm again).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = path.join(ROOT, 'docs/observability-dashboard.svg');
const PHASES = [
  { name: 'calm', seconds: 20, clients: 4, perClient: 0.5, quotes: 10 },
  { name: 'burst', seconds: 25, clients: 30, perClient: 5, quotes: 60 },
  { name: 'recovery', seconds: 25, clients: 4, perClient: 0.5, quotes: 10 },
];

const children = [];
process.on('exit', () => children.forEach((child) => child.kill('SIGKILL')));

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function start(command, args, env = {}) {
  const child = spawn(command, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return child;
}

async function waitFor(url) {
  for (let i = 0; i < 300; i++) {
    if ((await fetch(url).catch(() => undefined))?.ok) return;
    await sleep(100);
  }
  throw new Error(`${url} did not answer`);
}

async function main() {
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: 'inherit' });
  execFileSync(
    process.execPath,
    ['node_modules/typescript/bin/tsc', '-p', 'sample-app/tsconfig.json'],
    { cwd: ROOT, stdio: 'inherit' },
  );
  const dir = mkdtempSync(path.join(os.tmpdir(), 'holdup-figure-'));
  const [redisPort, appPort, promPort] = [await freePort(), await freePort(), await freePort()];
  start('redis-server', [
    '--port',
    String(redisPort),
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
  ]);
  await sleep(300);
  start(process.execPath, [path.join(ROOT, '.tmp/sample-app/main.js')], {
    PORT: String(appPort),
    RATE_LIMIT_STORE: 'redis',
    REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    TRUST_PROXY: 'true',
  });
  await waitFor(`http://127.0.0.1:${appPort}/health`);
  const config = path.join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: sample-app\n    static_configs:\n      - targets: ['127.0.0.1:${appPort}']\n`,
  );
  start('prometheus', [
    `--config.file=${config}`,
    `--storage.tsdb.path=${path.join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${promPort}`,
    '--log.level=warn',
  ]);
  await waitFor(`http://127.0.0.1:${promPort}/-/ready`);

  const startedAt = Date.now() / 1000;
  const marks = [];
  for (const phase of PHASES) {
    marks.push({ name: phase.name, at: Date.now() / 1000 });
    await drive(appPort, phase);
  }
  await sleep(3_000); // a few scrapes after the last request
  const endedAt = Date.now() / 1000;
  const range = (query) => queryRange(promPort, query, startedAt, endedAt);
  const panels = [
    {
      title: 'Decisions per second, by result',
      unit: '/s',
      series: await range('sum by (result) (rate(rate_limiting_requests_total[5s]))'),
      label: (m) => m.result,
    },
    {
      title: 'Denied per second, by limit',
      unit: '/s',
      series: await range(
        'sum by (policy) (rate(rate_limiting_requests_total{result="denied"}[5s]))',
      ),
      label: (m) => m.policy,
    },
    {
      title: 'Redis store latency p99',
      unit: 'ms',
      scale: 1000,
      series: await range(
        'histogram_quantile(0.99, sum by (le) (rate(rate_limiting_store_duration_seconds_bucket[5s])))',
      ),
      label: () => 'p99',
    },
    {
      title: 'Adaptive limit "quotes": rate vs admitted',
      unit: '/s',
      series: [
        ...(await range('max(rate_limiting_adaptive_rate{policy="quotes"})')).map((s) => ({
          ...s,
          metric: { name: 'effective rate' },
        })),
        ...(
          await range(
            'sum(rate(rate_limiting_requests_total{policy="quotes",result="admitted"}[5s]))',
          )
        ).map((s) => ({ ...s, metric: { name: 'admitted' } })),
      ],
      label: (m) => m.name,
    },
  ];
  writeFileSync(OUT, svg(panels, marks, startedAt, endedAt));
  rmSync(dir, { recursive: true, force: true });
  console.log(`wrote ${path.relative(ROOT, OUT)}`);
  process.exit(0);
}

/** Fire requests at the phase's rates for its duration, without waiting for answers (an open-loop load). */
async function drive(port, phase) {
  const until = Date.now() + phase.seconds * 1000;
  const get = (route, client) =>
    fetch(`http://127.0.0.1:${port}${route}`, { headers: { 'x-forwarded-for': client } }).then(
      (r) => r.arrayBuffer(),
      () => undefined,
    );
  let tick = 0;
  while (Date.now() < until) {
    // Every 100 ms: a tenth of each rate.
    for (let c = 0; c < phase.clients; c++)
      if (Math.random() < phase.perClient / 10) void get('/products', `198.51.100.${c + 1}`);
    for (let q = 0; q < phase.quotes / 10; q++) void get('/quotes', `192.0.2.${(tick % 50) + 1}`);
    tick++;
    await sleep(100);
  }
}

async function queryRange(port, query, start, end) {
  const params = new URLSearchParams({ query, start: String(start), end: String(end), step: '1' });
  const body = await (await fetch(`http://127.0.0.1:${port}/api/v1/query_range?${params}`)).json();
  if (body.status !== 'success') throw new Error(`${query}: ${body.error}`);
  return body.data.result.map((r) => ({
    metric: r.metric,
    values: r.values.map(([t, v]) => [t, Number(v)]).filter(([, v]) => Number.isFinite(v)),
  }));
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b'];

function svg(panels, marks, start, end) {
  const W = 460;
  const H = 220;
  const pad = { l: 52, r: 12, t: 28, b: 30 };
  const parts = [];
  panels.forEach((panel, index) => {
    const ox = (index % 2) * (W + 20) + 10;
    const oy = Math.floor(index / 2) * (H + 20) + 40;
    const scale = panel.scale ?? 1;
    const max =
      Math.max(1e-9, ...panel.series.flatMap((s) => s.values.map(([, v]) => v * scale))) * 1.1;
    const x = (t) => ox + pad.l + ((t - start) / (end - start)) * (W - pad.l - pad.r);
    const y = (v) => oy + H - pad.b - (v / max) * (H - pad.t - pad.b);
    parts.push(`<rect x="${ox}" y="${oy}" width="${W}" height="${H}" fill="#fff" stroke="#ccc"/>`);
    parts.push(
      `<text x="${ox + 8}" y="${oy + 18}" font-size="13" font-weight="bold">${escape(panel.title)}</text>`,
    );
    marks.forEach((mark, i) => {
      const next = marks[i + 1]?.at ?? end;
      if (mark.name === 'burst')
        parts.push(
          `<rect x="${x(mark.at)}" y="${oy + pad.t}" width="${x(next) - x(mark.at)}" height="${H - pad.t - pad.b}" fill="#fbeaea"/>`,
        );
      parts.push(
        `<text x="${x(mark.at) + 3}" y="${oy + H - pad.b - 4}" font-size="10" fill="#888">${mark.name}</text>`,
      );
    });
    for (const fraction of [0, 0.5, 1]) {
      const value = (max / 1.1) * fraction;
      parts.push(
        `<line x1="${ox + pad.l}" x2="${ox + W - pad.r}" y1="${y(value)}" y2="${y(value)}" stroke="#eee"/>`,
      );
      parts.push(
        `<text x="${ox + pad.l - 4}" y="${y(value) + 4}" font-size="10" text-anchor="end">${format(value)}${panel.unit === 'ms' ? ' ms' : ''}</text>`,
      );
    }
    parts.push(
      `<text x="${ox + W - pad.r}" y="${oy + H - 8}" font-size="10" text-anchor="end">${Math.round(end - start)} s</text>`,
    );
    panel.series.forEach((series, i) => {
      const color = COLORS[i % COLORS.length];
      const points = series.values
        .map(([t, v]) => `${x(t).toFixed(1)},${y(v * scale).toFixed(1)}`)
        .join(' ');
      parts.push(`<polyline fill="none" stroke="${color}" stroke-width="1.6" points="${points}"/>`);
      parts.push(
        `<text x="${ox + W - pad.r - 4}" y="${oy + 18 + i * 13}" font-size="11" text-anchor="end" fill="${color}">${escape(panel.label(series.metric) ?? '')}</text>`,
      );
    });
  });
  const height = Math.ceil(panels.length / 2) * (H + 20) + 50;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${2 * W + 40}" height="${height}" font-family="sans-serif">\n` +
    `<text x="10" y="24" font-size="15" font-weight="bold">nestjs-holdup sample app under load, scraped by Prometheus (scripts/observability-figure.mjs)</text>\n` +
    parts.join('\n') +
    '\n</svg>\n'
  );
}

const format = (value) =>
  value >= 100
    ? Math.round(value).toString()
    : value >= 10
      ? value.toFixed(0)
      : value.toFixed(value >= 1 ? 1 : 2);
const escape = (text) => String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;');

await main();
