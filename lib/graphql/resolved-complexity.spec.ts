import { parse, type FieldNode, type OperationDefinitionNode } from 'graphql';
import { resolvedComplexity } from './resolved-complexity.js';

/** The root field nodes of `query`'s operation, and its fragments. */
function parsed(query: string) {
  const document = parse(query);
  const operation = document.definitions.find(
    (d): d is OperationDefinitionNode => d.kind === 'OperationDefinition',
  )!;
  const fragments = Object.fromEntries(
    document.definitions.flatMap((d) =>
      d.kind === 'FragmentDefinition' ? [[d.name.value, d]] : [],
    ),
  );
  return { fields: operation.selectionSet.selections as FieldNode[], fragments };
}

describe('resolvedComplexity', () => {
  it('counts each selected field once, and a list per item it really holds', () => {
    const { fields, fragments } = parsed('{ items(first: 13) { id name tags { label } } }');
    const items = [
      { id: 1, tags: [{ label: 'a' }, { label: 'b' }] },
      { id: 2, tags: [] },
    ];
    // items 1 + item 1: (id, name, tags 1 + 2 labels) 5 + item 2: (id, name, tags) 3
    expect(resolvedComplexity(fields, items, { fragments, variableValues: {} })).toBe(9);
    expect(resolvedComplexity(fields, [], { fragments, variableValues: {} })).toBe(1);
    expect(resolvedComplexity(fields, null, { fragments, variableValues: {} })).toBe(1);
  });

  it('leaves out what @include and @skip leave out, and follows fragments', () => {
    const { fields, fragments } = parsed(
      'query ($p: Boolean!) { items { id price @include(if: $p) name @skip(if: true) ...More ... on Item { extra } } } fragment More on Item { more }',
    );
    const parts = { fragments, variableValues: { p: false } };
    expect(resolvedComplexity(fields, [{ id: 1 }], parts)).toBe(1 + 3); // id, more, extra
    expect(resolvedComplexity(fields, [{ id: 1 }], { ...parts, variableValues: { p: true } })).toBe(
      5,
    );
  });
});
