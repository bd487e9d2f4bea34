// `npm run docs:plots`: compiles scripts/plot-adaptive.ts (and the simulation
// and library files it imports, nothing else) into .tmp/, runs it, and removes
// the build. No network, no browser, no dependency beyond TypeScript.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, '.tmp', 'plot-adaptive');

rmSync(out, { recursive: true, force: true });
execFileSync(
  process.execPath,
  [
    join(root, 'node_modules', 'typescript', 'bin', 'tsc'),
    '--ignoreConfig',
    '--module',
    'nodenext',
    '--moduleResolution',
    'nodenext',
    '--target',
    'es2022',
    '--strict',
    '--noUncheckedIndexedAccess',
    '--skipLibCheck',
    '--types',
    'node',
    '--rootDir',
    root,
    '--outDir',
    out,
    join(root, 'scripts', 'plot-adaptive.ts'),
  ],
  { stdio: 'inherit', cwd: root },
);
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'package.json'), JSON.stringify({ type: 'module' }) + '\n');

try {
  const { main } = await import(pathToFileURL(join(out, 'scripts', 'plot-adaptive.js')).href);
  main(root, process.argv.slice(2));
} finally {
  rmSync(out, { recursive: true, force: true });
}
