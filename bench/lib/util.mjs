// Small helpers shared by the bench sections: statistics, child processes, tables.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const QUICK = process.env.BENCH_QUICK === '1';
export const BENCH_DIR = fileURLToPath(new URL('..', import.meta.url));

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Nearest-rank percentile of an already sorted array (p in [0, 100]). */
export function percentileSorted(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export function round(value, digits = 2) {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/**
 * Run `node [nodeArgs] script ...args` and collect its stdout; the last line
 * that parses as JSON is the result. Rejects with stderr on a non-zero exit.
 */
export function runNodeJson(script, args = [], nodeArgs = [], options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, script, ...args.map(String)], {
      cwd: BENCH_DIR,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...options.env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0)
        return reject(new Error(`${script} ${args.join(' ')} exited with ${code}\n${stderr}`));
      const lines = stdout.trim().split('\n').reverse();
      for (const line of lines) {
        try {
          return resolve(JSON.parse(line));
        } catch {
          // not the result line
        }
      }
      reject(new Error(`${script} ${args.join(' ')} printed no JSON result\n${stdout}\n${stderr}`));
    });
  });
}

/** Render rows (arrays of cells) as a fixed-width text table. */
export function textTable(header, rows) {
  const all = [header, ...rows].map((row) => row.map((cell) => String(cell)));
  const widths = header.map((_, i) => Math.max(...all.map((row) => row[i].length)));
  const line = (row) =>
    row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
  return [
    line(all[0]),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...all.slice(1).map(line),
  ].join('\n');
}

/** Render rows as a Markdown table (first column left-aligned, others right-aligned). */
export function markdownTable(header, rows) {
  const line = (row) => `| ${row.join(' | ')} |`;
  return [
    line(header),
    line(header.map((_, i) => (i === 0 ? ':--' : '--:'))),
    ...rows.map(line),
  ].join('\n');
}

export function log(message) {
  process.stderr.write(`[bench] ${message}\n`);
}

const DIST_ENTRY = fileURLToPath(new URL('../../dist/esm/lib/index.js', import.meta.url));

/**
 * Run `task`, retrying up to `attempts` times. Other sessions on a shared
 * checkout may rebuild `dist/` (which deletes it first) in the middle of a
 * bench; a child that starts then fails to import the package, so wait for the
 * build to be back and try again rather than lose the whole run.
 */
export async function withRetry(what, task, attempts = 3) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await task();
    } catch (error) {
      if (attempt >= attempts) throw error;
      log(
        `${what} failed (attempt ${attempt}/${attempts}): ${String(error.message).split('\n')[0]}; waiting for dist/ and retrying`,
      );
      await waitForDist();
    }
  }
}

async function waitForDist() {
  const { statSync } = await import('node:fs');
  let stableSince = 0;
  for (let waited = 0; waited < 120_000; waited += 1_000) {
    let present = false;
    try {
      present = statSync(DIST_ENTRY).isFile();
    } catch {
      present = false;
    }
    stableSince = present ? stableSince + 1_000 : 0;
    // A build writes dist/esm then dist/cjs: a few quiet seconds after the entry reappears.
    if (stableSince >= 5_000) return;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}
