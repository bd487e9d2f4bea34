import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * The package as consumers get it: `npm pack` of the built package, installed
 * into a CommonJS project, loaded with `require()`. Needs `npm run build`
 * first (`npm test` does it) and the npm registry for the Nest 11 project.
 */
const root = resolve(import.meta.dirname, '../..');
const app = join(root, 'test/cjs-consumer/app.cjs');

interface Run {
  readonly nest: string;
  readonly statuses: readonly { status: number; retryAfter: string | null; policy: string | null }[];
}

const expectBurstThen429 = (run: Run) => {
  expect(run.statuses.map((s) => s.status)).toEqual([200, 200, 429]);
  expect(run.statuses[2]!.retryAfter).toBe('1');
  expect(run.statuses[0]!.policy).toBe('"default";q=2;w=2');
};

describe('CommonJS consumers', () => {
  it('require() of the built package in this repo (Nest 12, through require(esm)) gets a 429 after the burst', () => {
    const run: Run = JSON.parse(execFileSync(process.execPath, [app], { cwd: root, encoding: 'utf8' }));
    expect(run.nest).toMatch(/^12\./);
    expectBurstThen429(run);
  });

  it('a CommonJS Nest 11 project that installed the packed tarball gets a 429 after the burst', () => {
    const project = join(root, '.tmp/cjs-nest11');
    rmSync(project, { recursive: true, force: true });
    mkdirSync(project, { recursive: true });
    const tarball = execFileSync('npm', ['pack', '--silent', '--pack-destination', project], { cwd: root, encoding: 'utf8' }).trim().split('\n').pop()!;
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'cjs-nest11-consumer', private: true, type: 'commonjs' }));
    execFileSync(
      'npm',
      ['install', '--no-audit', '--no-fund', '--loglevel=error', '@nestjs/common@^11', '@nestjs/core@^11', '@nestjs/platform-express@^11', 'reflect-metadata', 'rxjs', `./${tarball}`],
      { cwd: project, stdio: 'pipe', timeout: 170_000 },
    );
    copyFileSync(app, join(project, 'app.cjs'));
    const run: Run = JSON.parse(execFileSync(process.execPath, ['app.cjs'], { cwd: project, encoding: 'utf8' }));
    expect(run.nest).toMatch(/^11\./);
    expectBurstThen429(run);
    // Only the built package ships.
    expect(readdirSync(join(project, 'node_modules/nestjs-holdup')).sort()).toEqual(['README.md', 'dist', 'package.json']);
  }, 180_000);
});
