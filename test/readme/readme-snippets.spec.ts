import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import ts from 'typescript';

/**
 * Every ```ts (or ```typescript) block of README.md and of every Markdown file
 * under docs/ compiles, under `strict`, against the built package as a user
 * imports it: each block is one ES module of its own (so it must import what
 * it uses and declare the helpers it does not define), compiled with
 * module/moduleResolution nodenext, with `nestjs-holdup` resolved through the
 * package's `exports` to dist/ (needs `npm run build` first; `npm test` does
 * it) and everything else (@nestjs/*, ioredis, @types/node) from this repo's
 * node_modules. A new block, or a new page under docs/, is checked without
 * touching this file; a failure names its file and line.
 */
const root = resolve(import.meta.dirname, '../..');
/** README.md, and every page under docs/ (found, not listed: a new page is checked too). */
const DOCUMENTS = [
  'README.md',
  ...readdirSync(join(root, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name.split(sep).join('/')}`)
    .sort(),
];

interface Snippet {
  /** 1-based line of the opening fence in the document. */
  readonly fenceLine: number;
  readonly code: string;
}

/** Fenced code blocks whose info string starts with `ts` or `typescript` (CommonMark fences, up to 3 spaces of indentation). */
function extractTsSnippets(markdown: string): Snippet[] {
  const snippets: Snippet[] = [];
  const lines = markdown.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const open = /^( {0,3})(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, lang] = open as unknown as [string, string, string, string];
    const close = new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    let end = i + 1;
    while (end < lines.length && !close.test(lines[end]!)) end++;
    if (/^(ts|typescript)$/i.test(lang)) {
      const body = lines
        .slice(i + 1, end)
        .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line.trimStart()));
      snippets.push({ fenceLine: i + 1, code: body.join('\n') + '\n' });
    }
    i = end; // skip the block, whatever its language: a fence inside it is not a block
  }
  return snippets;
}

const COMPILER_OPTIONS: ts.CompilerOptions = {
  strict: true,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2022.d.ts'],
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  moduleDetection: ts.ModuleDetectionKind.Force, // a block without import or export is still a module of its own
  types: ['node'],
  typeRoots: [join(root, 'node_modules/@types')],
  skipLibCheck: true, // the package's declarations are checked by the consumer test (test/cjs-consumer) and attw
  noEmit: true,
};

describe.each(DOCUMENTS)('%s TypeScript snippets', (DOCUMENT) => {
  const markdown = readFileSync(join(root, DOCUMENT), 'utf8');
  const snippets = extractTsSnippets(markdown);

  it('finds the blocks (fence parsing sanity check)', () => {
    const tsFences = markdown
      .split(/\r?\n/)
      .filter((line) => /^ {0,3}(`{3,}|~{3,})\s*(ts|typescript)(\s.*)?$/i.test(line)).length;
    // The README has snippets; a docs page may have none (its fences are still counted).
    if (DOCUMENT === 'README.md') expect(snippets.length).toBeGreaterThan(0);
    expect(snippets).toHaveLength(tsFences);
  });

  (snippets.length > 0 ? it : it.skip)(
    'each compiles under strict against the built package',
    () => {
      // A project of its own, with a package.json (ESM) so that `nestjs-holdup` is
      // not a self-reference of this repo, and node_modules/nestjs-holdup -> the repo
      // (its package.json `exports` -> dist/esm). Other packages resolve from the
      // repo's node_modules, up the tree.
      const dir = join(root, '.tmp/readme-snippets', DOCUMENT.replace(/[^a-z0-9]+/gi, '-'));
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(join(dir, 'node_modules'), { recursive: true });
      writeFileSync(
        join(dir, 'package.json'),
        JSON.stringify({ name: 'readme-snippets', private: true, type: 'module' }),
      );
      symlinkSync(root, join(dir, 'node_modules/nestjs-holdup'), 'dir');

      const files = new Map<string, Snippet>();
      for (const snippet of snippets) {
        const file = join(dir, `readme-line-${snippet.fenceLine}.ts`);
        writeFileSync(file, snippet.code);
        files.set(file, snippet);
      }
      const program = ts.createProgram([...files.keys()], COMPILER_OPTIONS);
      // "README.md:<line>:<column> ...", in README order; anything else (an option, a declaration file) first.
      const failures = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
        const message = `TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
        if (!diagnostic.file || diagnostic.start === undefined) return { at: 0, text: message };
        const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
        const snippet = files.get(resolve(diagnostic.file.fileName));
        if (!snippet)
          return {
            at: 0,
            text: `${diagnostic.file.fileName}:${line + 1}:${character + 1}: ${message}`,
          };
        const at = snippet.fenceLine + line + 1;
        return {
          at,
          text: `${DOCUMENT}:${at}:${character + 1} (in the snippet opened at line ${snippet.fenceLine}): ${message}`,
        };
      });
      expect(failures.sort((a, b) => a.at - b.at).map((failure) => failure.text)).toEqual([]);
      // The snippets saw the built package's declarations, not the sources.
      const seen = program.getSourceFiles().map((file) => resolve(file.fileName));
      expect(seen.filter((name) => name.startsWith(join(root, 'dist/esm/')))).not.toEqual([]);
      expect(
        seen.filter(
          (name) => name.startsWith(join(root, 'lib/')) || name.startsWith(join(root, 'adapters/')),
        ),
      ).toEqual([]);
    },
    60_000,
  );
});
