// Counts the public surface: for every entry point in package.json `exports`,
// the names its declarations (dist/esm, the `import` condition's `types`)
// export, split into values (present at run time: what `import()` of the
// entry point's JavaScript gives) and types (declarations only). A name whose
// declaration is a function, class or const but which the JavaScript does not
// export (`export type` of a value) is listed as "type-only value": usable in
// a type position only, an error at run time.
//
//   npm run build && node scripts/count-exports.mjs [--names | --json]
//
// A type-only namespace (`export type * as RateLimitTypes from ...`) counts as
// one type; its members are listed under `namespaces` (and a value among them
// is a type-only value too, `RateLimitTypes.name`).
//
// --names prints each entry point's names as well as the table; --json prints
// `{ [entry]: { values, types, typeOnlyValues, namespaces } }` instead (test/package reads it).
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const showNames = process.argv.includes('--names');
const json = process.argv.includes('--json');

const entries = Object.entries(pkg.exports)
  .filter(([, target]) => typeof target === 'object' && target.import?.types)
  .map(([entry, target]) => ({
    entry,
    types: join(root, target.import.types),
    js: join(root, target.import.default),
  }));

const program = ts.createProgram(
  entries.map((e) => e.types),
  {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    noEmit: true,
  },
);
const checker = program.getTypeChecker();

const resolveAlias = (symbol) =>
  symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
const isModule = (symbol) =>
  Boolean(symbol.flags & ts.SymbolFlags.ValueModule) &&
  symbol.declarations?.some((declaration) => ts.isSourceFile(declaration));
/** A function, class or constant (not an interface or type alias, whatever merges with it). */
const isValue = (symbol) => {
  const target = resolveAlias(symbol);
  return (
    Boolean(target.flags & ts.SymbolFlags.Value) &&
    !(target.flags & ts.SymbolFlags.Interface) &&
    !(target.flags & ts.SymbolFlags.TypeAlias)
  );
};

const rows = [];
const all = { values: new Set(), types: new Set() };
for (const { entry, types, js } of entries) {
  const file = program.getSourceFile(types);
  if (!file) throw new Error(`${entry}: ${types} not found (npm run build first)`);
  const moduleSymbol = checker.getSymbolAtLocation(file);
  const names = moduleSymbol ? checker.getExportsOfModule(moduleSymbol) : [];
  const runtime = new Set(Object.keys(await import(pathToFileURL(js).href)));
  const values = [];
  const typesOnly = [];
  const typeOnlyValues = [];
  const namespaces = {};
  for (const symbol of names) {
    const name = symbol.getName();
    if (runtime.has(name)) {
      values.push(name);
      continue;
    }
    typesOnly.push(name);
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    if (isModule(target)) {
      // `export type * as Name from './file.js'`: a namespace of types, one
      // name at the entry point; its members are listed (and checked) too.
      const members = checker.getExportsOfModule(target);
      namespaces[name] = members.map((member) => member.getName()).sort();
      for (const member of members)
        if (isValue(member)) typeOnlyValues.push(`${name}.${member.getName()}`);
      continue;
    }
    if (isValue(symbol)) typeOnlyValues.push(name);
  }
  values.forEach((name) => all.values.add(`${entry}:${name}`));
  typesOnly.forEach((name) => all.types.add(`${entry}:${name}`));
  rows.push({
    entry,
    values: values.sort(),
    types: typesOnly.sort(),
    typeOnlyValues: typeOnlyValues.sort(),
    namespaces,
  });
}

if (json) {
  const report = Object.fromEntries(
    rows.map(({ entry, values, types, typeOnlyValues, namespaces }) => [
      entry,
      { values, types, typeOnlyValues, namespaces },
    ]),
  );
  process.stdout.write(JSON.stringify(report, null, 2) + '\n');
} else {
  const pad = (text, width) => String(text).padEnd(width);
  const padStart = (text, width) => String(text).padStart(width);
  console.log(
    `${pad('entry point', 28)}${padStart('values', 8)}${padStart('types', 8)}${padStart('total', 8)}  type-only values`,
  );
  for (const row of rows) {
    console.log(
      `${pad(row.entry, 28)}${padStart(row.values.length, 8)}${padStart(row.types.length, 8)}${padStart(row.values.length + row.types.length, 8)}  ${row.typeOnlyValues.join(', ') || '-'}`,
    );
  }
  for (const row of rows)
    for (const [name, members] of Object.entries(row.namespaces))
      console.log(
        `${pad(`  ${row.entry} ${name}.*`, 28)}${padStart('', 8)}${padStart(members.length, 8)}  (type namespace: one name above)`,
      );
  const distinct = new Set(rows.flatMap((row) => [...row.values, ...row.types]));
  console.log(
    `${pad('all entry points', 28)}${padStart(all.values.size, 8)}${padStart(all.types.size, 8)}${padStart(all.values.size + all.types.size, 8)}  (${distinct.size} distinct names)`,
  );
  if (showNames) {
    for (const row of rows) {
      console.log(`\n${row.entry}`);
      console.log(`  values: ${row.values.join(', ') || '-'}`);
      console.log(`  types:  ${row.types.join(', ') || '-'}`);
      for (const [name, members] of Object.entries(row.namespaces))
        console.log(`  ${name}.: ${members.join(', ')}`);
    }
  }
}
