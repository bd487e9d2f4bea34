import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';

/**
 * docs/options.md lists every option: each table follows a marker
 * `<!-- options: <TypeName> -->`, and its first column names the options in
 * backticks. The names of each table must be exactly the property names of
 * that type, read from the sources with the TypeScript compiler (unions and
 * inherited members included), so that an option added, renamed or removed
 * without its row fails here. Each row must also say since which version it
 * exists (`0.1.0`, `0.2.0`, ...).
 */
const root = resolve(import.meta.dirname, '../..');
const DOCUMENT = 'docs/options.md';

/** The types the reference documents: where each is declared, and how to read its type. */
const TYPES: Record<string, { readonly file: string; readonly kind: 'type' | 'value' }> = {
  // What forRoot() takes: RateLimitModuleOptions plus the `global` extra of the generated module.
  RATE_LIMIT_OPTIONS_TYPE: { file: 'lib/rate-limit.module-definition.ts', kind: 'value' },
  RateLimitOptions: { file: 'lib/interfaces/rate-limit-options.interface.ts', kind: 'type' },
  CalendarOptions: { file: 'lib/interfaces/rate-limit-options.interface.ts', kind: 'type' },
  AdaptiveOptions: { file: 'lib/interfaces/adaptive-options.interface.ts', kind: 'type' },
  HotKeysOptions: { file: 'lib/interfaces/hot-keys-options.interface.ts', kind: 'type' },
  RateLimitMetricsOptions: { file: 'lib/interfaces/metrics-options.interface.ts', kind: 'type' },
  RateLimitEventsOptions: { file: 'lib/interfaces/events-options.interface.ts', kind: 'type' },
  MemoryStoreOptions: { file: 'adapters/memory/memory.store.ts', kind: 'type' },
  RedisStoreOptions: { file: 'adapters/redis/redis-store-options.ts', kind: 'type' },
  TwoTierStoreOptions: { file: 'adapters/two-tier/two-tier.options.ts', kind: 'type' },
};

interface Row {
  readonly line: number;
  readonly names: readonly string[];
  readonly since: string;
}

/** The tables of the document, by the type their marker names. */
function tablesOf(markdown: string): Map<string, Row[]> {
  const tables = new Map<string, Row[]>();
  const lines = markdown.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const marker = /^<!--\s*options:\s*(\S+)\s*-->\s*$/.exec(lines[i]!);
    if (!marker) continue;
    const type = marker[1]!;
    if (tables.has(type)) throw new Error(`${DOCUMENT}:${i + 1}: a second table for ${type}`);
    let at = i + 1;
    while (at < lines.length && lines[at]!.trim() === '') at++;
    const header = cells(lines[at] ?? '');
    const sinceColumn = header.findIndex((cell) => /^since$/i.test(cell));
    if (!/^option$/i.test(header[0] ?? '') || sinceColumn < 0)
      throw new Error(
        `${DOCUMENT}:${at + 1}: the table for ${type} must start with | Option | ... | Since |`,
      );
    const rows: Row[] = [];
    for (at += 2; at < lines.length && lines[at]!.startsWith('|'); at++) {
      const row = cells(lines[at]!);
      // `a` / `b` in one cell documents two names (an option and its alias).
      const names = [...row[0]!.matchAll(/`([A-Za-z_$][\w$]*)`/g)].map((match) => match[1]!);
      rows.push({ line: at + 1, names, since: row[sinceColumn] ?? '' });
    }
    tables.set(type, rows);
  }
  return tables;
}

function cells(line: string): string[] {
  // Split on pipes outside backticks (a type such as `'a' | 'b'` holds pipes).
  const out: string[] = [];
  let cell = '';
  let code = false;
  for (const char of line.trim().replace(/^\||\|$/g, '')) {
    if (char === '`') code = !code;
    if (char === '|' && !code) {
      out.push(cell.trim());
      cell = '';
    } else cell += char;
  }
  out.push(cell.trim());
  return out;
}

/** The property names of each type, as the compiler sees them. */
function propertyNames(): Map<string, string[]> {
  const files = [...new Set(Object.values(TYPES).map(({ file }) => join(root, file)))];
  const program = ts.createProgram(files, {
    strict: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    experimentalDecorators: true,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const names = new Map<string, string[]>();
  for (const [name, { file, kind }] of Object.entries(TYPES)) {
    const source = program.getSourceFile(join(root, file));
    if (!source) throw new Error(`${file}: not found`);
    const module = checker.getSymbolAtLocation(source);
    const symbol = module && checker.getExportsOfModule(module).find((e) => e.name === name);
    if (!symbol) throw new Error(`${file}: no ${kind} named ${name}`);
    const type =
      kind === 'type' ? checker.getDeclaredTypeOfSymbol(symbol) : checker.getTypeOfSymbol(symbol);
    // A union (RateLimitOptions): every member's names, those a kind refuses (`never`) included
    // once, since some other kind takes them.
    const members = type.isUnion() ? type.types : [type];
    const all = new Set<string>();
    for (const member of members)
      for (const property of checker.getPropertiesOfType(member)) all.add(property.name);
    names.set(name, [...all].sort());
  }
  return names;
}

describe(`${DOCUMENT} (the options reference)`, () => {
  const markdown = readFileSync(join(root, DOCUMENT), 'utf8');
  const tables = tablesOf(markdown);
  const actual = propertyNames();

  it('has a table for each documented type, and no other', () => {
    expect([...tables.keys()].sort()).toEqual(Object.keys(TYPES).sort());
  });

  it.each(Object.keys(TYPES))('%s: one row per option, no more, no less', (type) => {
    const documented = (tables.get(type) ?? []).flatMap((row) => row.names);
    const missing = actual.get(type)!.filter((name) => !documented.includes(name));
    const unknown = documented.filter((name) => !actual.get(type)!.includes(name));
    const twice = documented.filter((name, i) => documented.indexOf(name) !== i);
    expect({ missing, unknown, twice }).toEqual({ missing: [], unknown: [], twice: [] });
  });

  it('says since which version each option exists', () => {
    const undated = [...tables.entries()].flatMap(([type, rows]) =>
      rows
        .filter((row) => !/^\d+\.\d+\.\d+$/.test(row.since))
        .map((row) => `${DOCUMENT}:${row.line} (${type}): "${row.since}"`),
    );
    expect(undated).toEqual([]);
  });
});
