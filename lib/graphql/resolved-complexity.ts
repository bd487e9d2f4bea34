import {
  getDirectiveValues,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  type FieldNode,
  type FragmentDefinitionNode,
  type SelectionSetNode,
} from 'graphql';

/** What the walk reads besides the selections: fragments and variables of the operation. */
export interface OperationParts {
  readonly fragments: Readonly<Record<string, FragmentDefinitionNode>>;
  readonly variableValues: Readonly<Record<string, unknown>>;
}

/**
 * The complexity a root field really had, measured on what its resolver
 * returned: every field selected (and not left out by `@include`/`@skip`)
 * counts 1, and a list counts its children once per item it really holds,
 * not per item estimated. A field its parent's value does not carry (a
 * field resolver of its own) is counted as one object with its children.
 * Pure: the selection, the value and the operation's parts in, a number out.
 */
export function resolvedComplexity(
  fieldNodes: readonly FieldNode[],
  result: unknown,
  parts: OperationParts,
): number {
  let total = 0;
  for (const node of fieldNodes) {
    if (!included(node, parts)) continue;
    total += 1 + childrenOf(node.selectionSet, result, parts);
  }
  return total;
}

function childrenOf(
  selectionSet: SelectionSetNode | undefined,
  value: unknown,
  parts: OperationParts,
): number {
  if (selectionSet === undefined || value === null) return 0;
  if (Array.isArray(value)) {
    let sum = 0;
    for (const item of value) sum += walk(selectionSet, item, parts);
    return sum;
  }
  return walk(selectionSet, value, parts);
}

function walk(selectionSet: SelectionSetNode, value: unknown, parts: OperationParts): number {
  let total = 0;
  for (const selection of selectionSet.selections) {
    if (!included(selection, parts)) continue;
    if (selection.kind === 'Field') {
      const key = selection.alias?.value ?? selection.name.value;
      const child =
        value !== null && typeof value === 'object'
          ? (value as Record<string, unknown>)[key]
          : undefined;
      total += 1 + childrenOf(selection.selectionSet, child, parts);
    } else if (selection.kind === 'InlineFragment') {
      total += walk(selection.selectionSet, value, parts);
    } else {
      const fragment = parts.fragments[selection.name.value];
      if (fragment !== undefined) total += walk(fragment.selectionSet, value, parts);
    }
  }
  return total;
}

/** `@include(if: false)` and `@skip(if: true)` leave a selection out. */
function included(node: Parameters<typeof getDirectiveValues>[1], parts: OperationParts): boolean {
  if (node.directives === undefined || node.directives.length === 0) return true;
  const variables = parts.variableValues as Record<string, unknown>;
  if (getDirectiveValues(GraphQLSkipDirective, node, variables)?.['if'] === true) return false;
  return getDirectiveValues(GraphQLIncludeDirective, node, variables)?.['if'] !== false;
}
