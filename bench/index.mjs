// Entry point of `npm run bench` (which builds first).
//
//   npm run bench                      full run (under 10 min on a quiet 2-core machine: HTTP ~3.5 min,
//                                      the others 1-2 min each; each section's time is kept in
//                                      results.sectionSeconds): writes bench/results/latest.json and docs/benchmarks.md
//   BENCH_QUICK=1 npm run bench        short run (~2 min): prints only
//   BENCH_ONLY=micro,memory npm run bench   some sections (http, guard, micro, memory, redis): prints only
//   BENCH_WRITE=1                      write the files even for a quick or partial run
//
// Progress goes to stderr, the tables to stdout.
// One random order per run (bench/lib/shuffle.mjs), the same for every contender and section.
process.env.BENCH_SEED ??= String(Date.now() % 2 ** 31);
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { runGuard } from './guard/run.mjs';
import { runHttp } from './http/run.mjs';
import { runMemory } from './memory/run.mjs';
import { runMicro } from './micro/run.mjs';
import { runRedis } from './redis/run.mjs';
import { markdownReport, textReport } from './lib/report.mjs';
import { log, QUICK } from './lib/util.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SECTIONS = {
  http: runHttp,
  guard: runGuard,
  micro: runMicro,
  memory: runMemory,
  redis: runRedis,
};
const only = process.env.BENCH_ONLY
  ? process.env.BENCH_ONLY.split(',').map((s) => s.trim())
  : Object.keys(SECTIONS);
for (const name of only)
  if (!SECTIONS[name])
    throw new Error(
      `BENCH_ONLY: unknown section ${name}; one of ${Object.keys(SECTIONS).join(', ')}`,
    );
// Only a full run replaces the committed results, unless BENCH_WRITE=1 says otherwise.
const complete =
  process.env.BENCH_WRITE === '1' || (!QUICK && only.length === Object.keys(SECTIONS).length);

function versionOf(pkg) {
  try {
    return JSON.parse(readFileSync(`${ROOT}/node_modules/${pkg}/package.json`, 'utf8')).version;
  } catch {
    return undefined;
  }
}

function redisServerVersion() {
  try {
    return /v=(\S+)/.exec(
      execFileSync(process.env.REDIS_SERVER ?? '/usr/bin/redis-server', ['--version'], {
        encoding: 'utf8',
      }),
    )?.[1];
  } catch {
    return undefined;
  }
}

/** The source the build came from (read-only git commands). */
function sourceState() {
  const git = (...args) => {
    try {
      return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
    } catch {
      return undefined;
    }
  };
  const changed = git('status', '--porcelain', '--', 'lib', 'adapters', 'package.json');
  return {
    commit: git('rev-parse', '--short', 'HEAD'),
    uncommittedInLibOrAdapters: changed ? changed.split('\n').map((line) => line.trim()) : [],
  };
}

const startedAt = new Date();
const source = sourceState();
const machine = {
  nproc: os.availableParallelism?.() ?? os.cpus().length,
  cpu: os.cpus()[0]?.model,
  memoryGB: Math.round(os.totalmem() / 2 ** 30),
  os: `${os.type()} ${os.release()} ${os.arch()}`,
  node: process.version,
  loadAverageAtStart: os.loadavg().map((v) => Math.round(v * 100) / 100),
};
const versions = {
  'nestjs-holdup': JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')).version,
  '@nestjs/core': versionOf('@nestjs/core'),
  '@nestjs/platform-express': versionOf('@nestjs/platform-express'),
  express: versionOf('express'),
  '@nestjs/platform-fastify': versionOf('@nestjs/platform-fastify'),
  fastify: versionOf('fastify'),
  '@nestjs/throttler': versionOf('@nestjs/throttler'),
  'rate-limiter-flexible': versionOf('rate-limiter-flexible'),
  autocannon: versionOf('autocannon'),
  ioredis: versionOf('ioredis'),
  'redis-server': redisServerVersion(),
};

const results = {
  command: [
    QUICK && 'BENCH_QUICK=1',
    process.env.BENCH_ONLY && `BENCH_ONLY=${process.env.BENCH_ONLY}`,
    process.env.BENCH_WRITE === '1' && 'BENCH_WRITE=1',
    'npm run bench',
  ]
    .filter(Boolean)
    .join(' '),
  quick: QUICK,
  date: startedAt.toISOString(),
  machine,
  versions,
  source,
};
results.sectionSeconds = {};
for (const name of only) {
  const sectionStart = Date.now();
  log(`section ${name}...`);
  results[name] = await SECTIONS[name]();
  results.sectionSeconds[name] = Math.round((Date.now() - sectionStart) / 1000);
  log(`section ${name} done in ${results.sectionSeconds[name]} s`);
}
machine.loadAverageAtEnd = os.loadavg().map((v) => Math.round(v * 100) / 100);
const SEPARATE_MARK =
  '<!-- sections below: measured by their own scripts, kept by npm run bench -->';

// Other sessions may commit or rebuild while the bench runs: say so if the source moved.
const sourceAtEnd = sourceState();
if (JSON.stringify(sourceAtEnd) !== JSON.stringify(source)) source.changedDuringRun = sourceAtEnd;
results.durationSeconds = Math.round((Date.now() - startedAt.getTime()) / 1000);

process.stdout.write(textReport(results) + '\n');

/**
 * The sections measured by scripts of their own (adaptive concurrency, the
 * fleet), kept from the page as it stands: this run did not measure them, and
 * rewriting the page must not drop them. They start at {@link SEPARATE_MARK}.
 */
function separateSections() {
  let page = '';
  try {
    page = readFileSync(`${ROOT}/docs/benchmarks.md`, 'utf8');
  } catch {
    return '';
  }
  const at = page.indexOf(SEPARATE_MARK);
  return at === -1 ? '' : '\n' + page.slice(at);
}

if (complete) {
  mkdirSync(`${ROOT}/bench/results`, { recursive: true });
  writeFileSync(`${ROOT}/bench/results/latest.json`, JSON.stringify(results, null, 2) + '\n');
  writeFileSync(`${ROOT}/docs/benchmarks.md`, markdownReport(results) + separateSections());
  log('wrote bench/results/latest.json and docs/benchmarks.md');
} else {
  log('quick or partial run: bench/results/latest.json and docs/benchmarks.md left as they were');
}
