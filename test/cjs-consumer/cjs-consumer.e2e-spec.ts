import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * The package as consumers get it: `npm pack` of the built package, installed
 * into a CommonJS project, loaded with `require()` and type-checked. Needs
 * `npm run build` first (`npm test` does it; packing with --ignore-scripts
 * skips the `prepack` build) and the npm registry for the Nest 11 project.
 */
const root = resolve(import.meta.dirname, '../..');
const app = join(root, 'test/cjs-consumer/app.cjs');
/** The repo's own compiler: nothing more to download into the consumer project. */
const tsc = join(root, 'node_modules/typescript/bin/tsc');

interface Run {
  readonly nest: string;
  readonly statuses: readonly {
    status: number;
    retryAfter: string | null;
    policy: string | null;
  }[];
  /** `<user>:<status>` on a route keyed by user behind its own auth guard (burst 1 per user). */
  readonly users: readonly string[];
}

const expectBurstThen429 = (run: Run) => {
  expect(run.statuses.map((s) => s.status)).toEqual([200, 200, 429]);
  expect(run.statuses[2]!.retryAfter).toBe('1');
  expect(run.statuses[0]!.policy).toBe('"default";q=2;w=2');
  // Each user their own bucket: the limit waited for the controller's auth guard.
  expect(run.users).toEqual(['alice:200', 'alice:429', 'bob:200']);
};

describe('CommonJS consumers', () => {
  it('require() of the built package in this repo (Nest 12, through require(esm)) gets a 429 after the burst', () => {
    const run: Run = JSON.parse(
      execFileSync(process.execPath, [app], { cwd: root, encoding: 'utf8' }),
    );
    expect(run.nest).toMatch(/^12\./);
    expectBurstThen429(run);
  });

  describe('a CommonJS Nest 11 project that installed the packed tarball', () => {
    const project = join(root, '.tmp/cjs-nest11');

    beforeAll(() => {
      rmSync(project, { recursive: true, force: true });
      mkdirSync(project, { recursive: true });
      const tarball = execFileSync(
        'npm',
        ['pack', '--ignore-scripts', '--silent', '--pack-destination', project],
        { cwd: root, encoding: 'utf8' },
      )
        .trim()
        .split('\n')
        .pop()!;
      writeFileSync(
        join(project, 'package.json'),
        JSON.stringify({ name: 'cjs-nest11-consumer', private: true, type: 'commonjs' }),
      );
      execFileSync(
        'npm',
        [
          'install',
          '--no-audit',
          '--no-fund',
          '--loglevel=error',
          '@nestjs/common@^11',
          '@nestjs/core@^11',
          '@nestjs/platform-express@^11',
          'reflect-metadata',
          'rxjs',
          `./${tarball}`,
        ],
        { cwd: project, stdio: 'pipe', timeout: 170_000 },
      );
      copyFileSync(app, join(project, 'app.cjs'));
      copyFileSync(join(root, 'test/cjs-consumer/typed-consumer.ts'), join(project, 'index.ts'));
      // A Nest 11 project's tsconfig of the CommonJS kind: no moduleResolution.
      // The package's declarations never import ioredis, so it is not installed;
      // @types/node (which @nestjs/* declarations reference) comes from this repo.
      const compilerOptions = {
        module: 'commonjs',
        target: 'ES2021',
        strict: true,
        experimentalDecorators: true,
        emitDecoratorMetadata: true,
        noEmit: true,
        skipLibCheck: false,
        typeRoots: [join(root, 'node_modules/@types')],
        types: ['node'],
      };
      writeFileSync(
        join(project, 'tsconfig.json'),
        JSON.stringify({ compilerOptions, files: ['index.ts'] }, null, 2),
      );
      // TypeScript 6 resolves modules for `module: commonjs` with no
      // moduleResolution as 'bundler' (it reads `exports`); TypeScript 5, which
      // Nest 11 projects compile with, resolves them as 'node10' (it ignores
      // `exports`, so subpaths need `typesVersions`). node10 is deprecated in 6.
      writeFileSync(
        join(project, 'tsconfig.node10.json'),
        JSON.stringify(
          {
            extends: './tsconfig.json',
            compilerOptions: { moduleResolution: 'node10', ignoreDeprecations: '6.0' },
          },
          null,
          2,
        ),
      );
    }, 180_000);

    it('gets a 429 after the burst', () => {
      const run: Run = JSON.parse(
        execFileSync(process.execPath, ['app.cjs'], { cwd: project, encoding: 'utf8' }),
      );
      expect(run.nest).toMatch(/^11\./);
      expectBurstThen429(run);
    });

    it('gets only the built package and its licence', () => {
      expect(readdirSync(join(project, 'node_modules/nestjs-holdup')).sort()).toEqual([
        'LICENSE',
        'README.md',
        'dist',
        'package.json',
      ]);
      // No source maps: they would point at lib/*.ts and adapters/*.ts, which are not shipped.
      const files = readdirSync(join(project, 'node_modules/nestjs-holdup/dist'), {
        recursive: true,
        encoding: 'utf8',
      });
      expect(files.filter((file) => file.endsWith('.map'))).toEqual([]);
      expect(files).toContain(join('cjs', 'adapters', 'two-tier', 'index.d.ts'));
    });

    it.each([
      ['no moduleResolution (TypeScript 6: bundler)', 'tsconfig.json'],
      [
        'moduleResolution node10 (what TypeScript 5 uses with no moduleResolution)',
        'tsconfig.node10.json',
      ],
    ])(
      'type-checks a TypeScript file importing nestjs-holdup, /redis, /two-tier, /algorithms, /store, /observability and /adaptive: module commonjs, %s',
      (_, tsconfig) => {
        const check = spawnSync(process.execPath, [tsc, '-p', tsconfig], {
          cwd: project,
          encoding: 'utf8',
        });
        expect(check.stdout + check.stderr).toBe('');
        expect(check.status).toBe(0);
      },
      60_000,
    );
  });
});
