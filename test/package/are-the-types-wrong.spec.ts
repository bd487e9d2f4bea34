import { spawnSync, execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';

/**
 * The packed package's types as every TypeScript module resolution finds them,
 * checked by @arethetypeswrong/cli (attw) on the tarball: node10 (`module:
 * commonjs` with no `moduleResolution` on TypeScript 5, which ignores
 * `exports`: the subpaths need `typesVersions`), node16 from CommonJS and from
 * ESM, and bundler. Needs `npm run build` first (`npm test` does it); packs
 * with --ignore-scripts so that `prepack` does not build again.
 */
const root = resolve(import.meta.dirname, '../..');
const attw = join(
  dirname(createRequire(import.meta.url).resolve('@arethetypeswrong/cli/package.json')),
  'dist/index.js',
);

interface Resolution {
  readonly resolution?: { readonly fileName: string; readonly isTypeScript: boolean };
}
interface Report {
  readonly analysis: {
    readonly types: { readonly kind: string };
    readonly entrypoints: Record<string, { readonly resolutions: Record<string, Resolution> }>;
    readonly problems: readonly {
      readonly kind: string;
      readonly entrypoint?: string;
      readonly resolutionKind?: string;
    }[];
  };
}

const KINDS = ['node10', 'node16-cjs', 'node16-esm', 'bundler'] as const;
/** The declaration file each entry point must resolve to, by resolution kind (the `require` build's for node10, as `main`). */
const ENTRY_POINTS: Record<string, { cjs: string; esm: string }> = {
  '.': { cjs: 'dist/cjs/lib/index.d.ts', esm: 'dist/esm/lib/index.d.ts' },
  './algorithms': {
    cjs: 'dist/cjs/lib/algorithms/index.d.ts',
    esm: 'dist/esm/lib/algorithms/index.d.ts',
  },
  './redis': {
    cjs: 'dist/cjs/adapters/redis/index.d.ts',
    esm: 'dist/esm/adapters/redis/index.d.ts',
  },
  './two-tier': {
    cjs: 'dist/cjs/adapters/two-tier/index.d.ts',
    esm: 'dist/esm/adapters/two-tier/index.d.ts',
  },
  './terminus': {
    cjs: 'dist/cjs/lib/terminus/index.d.ts',
    esm: 'dist/esm/lib/terminus/index.d.ts',
  },
  './store': { cjs: 'dist/cjs/lib/store/index.d.ts', esm: 'dist/esm/lib/store/index.d.ts' },
  './observability': {
    cjs: 'dist/cjs/lib/observability/index.d.ts',
    esm: 'dist/esm/lib/observability/index.d.ts',
  },
  './adaptive': {
    cjs: 'dist/cjs/lib/adaptive/index.d.ts',
    esm: 'dist/esm/lib/adaptive/index.d.ts',
  },
  './throttler-compat': {
    cjs: 'dist/cjs/lib/throttler-compat/index.d.ts',
    esm: 'dist/esm/lib/throttler-compat/index.d.ts',
  },
};

describe('the packed package, checked by arethetypeswrong', () => {
  let report: Report;

  beforeAll(() => {
    const dir = join(root, '.tmp/attw');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const tarball = execFileSync(
      'npm',
      ['pack', '--ignore-scripts', '--silent', '--pack-destination', dir],
      { cwd: root, encoding: 'utf8' },
    )
      .trim()
      .split('\n')
      .pop()!;
    // attw exits 1 when it finds problems; the JSON report is on stdout either way.
    const run = spawnSync(process.execPath, [attw, join(dir, tarball), '--format', 'json'], {
      cwd: dir,
      encoding: 'utf8',
    });
    if (!run.stdout.trim().startsWith('{'))
      throw new Error(`attw did not report (exit ${run.status}): ${run.stderr}`);
    report = JSON.parse(run.stdout) as Report;
  }, 60_000);

  it('finds no problem in any resolution mode (no rule ignored)', () => {
    expect(report.analysis.types.kind).toBe('included');
    expect(report.analysis.problems).toEqual([]);
  });

  it('resolves every entry point to its own declarations in node10, node16 (CommonJS and ESM) and bundler', () => {
    const found = Object.fromEntries(
      Object.keys(ENTRY_POINTS).map((entry) => [
        entry,
        Object.fromEntries(
          KINDS.map((kind) => [
            kind,
            report.analysis.entrypoints[entry]?.resolutions[kind]?.resolution?.fileName ?? null,
          ]),
        ),
      ]),
    );
    const expected = Object.fromEntries(
      Object.entries(ENTRY_POINTS).map(([entry, { cjs, esm }]) => [
        entry,
        {
          node10: `/node_modules/nestjs-holdup/${cjs}`,
          'node16-cjs': `/node_modules/nestjs-holdup/${cjs}`,
          'node16-esm': `/node_modules/nestjs-holdup/${esm}`,
          bundler: `/node_modules/nestjs-holdup/${esm}`,
        },
      ]),
    );
    expect(found).toEqual(expected);
  });
});
