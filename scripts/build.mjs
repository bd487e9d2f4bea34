// Dual build: ESM (dist/esm) and CommonJS (dist/cjs) from the same sources.
// Each output folder carries a package.json with its "type", so Node reads
// dist/cjs/**/*.js as CommonJS although the package root says "module".
// No source or declaration maps (tsconfig.build.json): they would point at
// lib/ and adapters/, which the package does not ship.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';

const tsc = (...args) =>
  execFileSync(
    process.execPath,
    ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json', ...args],
    { stdio: 'inherit' },
  );

rmSync('dist', { recursive: true, force: true });
tsc('--outDir', 'dist/esm');
tsc(
  '--outDir',
  'dist/cjs',
  '--module',
  'commonjs',
  '--moduleResolution',
  'node10',
  '--ignoreDeprecations',
  '6.0',
);
for (const [dir, type] of [
  ['dist/esm', 'module'],
  ['dist/cjs', 'commonjs'],
]) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/package.json`, JSON.stringify({ type }) + '\n');
}
