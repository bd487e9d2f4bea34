import type { ExecutionContext } from '@nestjs/common';
import {
  Kind,
  type DocumentNode,
  type FieldNode,
  type GraphQLResolveInfo,
  type OperationDefinitionNode,
} from 'graphql';
import { getComplexity, simpleEstimator, type ComplexityEstimator } from 'graphql-query-complexity';
import type { RateLimitSettleOutcome } from '../interfaces/rate-limit-options.interface.js';
import { resolvedComplexity } from './resolved-complexity.js';

/** Options of {@link graphqlComplexity}. */
export interface GraphqlComplexityOptions {
  /**
   * `graphql-query-complexity` estimators, tried in order for each field
   * (e.g. `fieldExtensionsEstimator()`, `directiveEstimator()`).
   * @default [simpleEstimator({ defaultComplexity: 1 })]
   */
  readonly estimators?: readonly ComplexityEstimator[];
  /**
   * After the resolver, give back what was not resolved (lists shorter than
   * their estimate), measured on its result. `false`: the estimate stays charged.
   * @default true
   */
  readonly refundUnresolved?: boolean;
}

/** The part of a limit {@link graphqlComplexity} fills in. */
export interface GraphqlComplexityLimit {
  /** The complexity of the operation's root field this call resolves, estimated once per operation. */
  readonly cost: (context: ExecutionContext) => number;
  /** What the root field really resolved, at most its estimate (absent with `refundUnresolved: false`). */
  readonly settle?: (outcome: RateLimitSettleOutcome) => number;
}

/** An operation's estimates, per root field node, each computed once (per request: keyed by its GraphQL context). */
const estimates = new WeakMap<
  object,
  { operation: OperationDefinitionNode; byField: Map<FieldNode, number> }
>();

/**
 * A complexity budget for GraphQL: spread into a limit on root fields
 * (`Query`, `Mutation` resolvers, or their class), so that an operation is
 * charged its complexity, estimated with `graphql-query-complexity`, once:
 * each root field takes its own subtree's share (the shares add up to the
 * operation's complexity), never each nested field's resolver call.
 *
 * ```ts
 * @RateLimit({ name: 'complexity', rate: '1000/min', burst: 1000, key: 'user', ...graphqlComplexity() })
 * @Resolver() class CatalogResolver { ... }
 * ```
 *
 * A denial is the transport's GraphQL error (`extensions.code:
 * 'TOO_MANY_REQUESTS'`, `retryAfter`, and `limits` with the budget left);
 * the headers carry the budget left on admitted operations too. A cost
 * above the burst can never pass (`retryAfter: null`): size the burst for
 * your largest allowed operation. See docs/settle.md.
 *
 * @publicApi
 */
export function graphqlComplexity(options: GraphqlComplexityOptions = {}): GraphqlComplexityLimit {
  const estimators = [...(options.estimators ?? [simpleEstimator({ defaultComplexity: 1 })])];
  const cost = (context: ExecutionContext): number => {
    const info = resolveInfo(context);
    if (info.path.prev !== undefined)
      throw new TypeError(
        `graphqlComplexity: put the limit on root fields (Query, Mutation), not on ${info.parentType.name}.${info.fieldName}`,
      );
    const key = (context.getArgByIndex<object | undefined>(2) ?? info.operation) as object;
    let known = estimates.get(key);
    if (known === undefined || known.operation !== info.operation) {
      known = { operation: info.operation, byField: new Map() };
      estimates.set(key, known);
    }
    const node = info.fieldNodes[0]!;
    let estimate = known.byField.get(node);
    if (estimate === undefined) {
      estimate = estimateRootField(info, estimators);
      known.byField.set(node, estimate);
    }
    // At least 1: a store charge is positive, and a free field still counts as a call.
    return Math.max(1, estimate);
  };
  if (options.refundUnresolved === false) return { cost };
  const settle = ({ result, context, reserved }: RateLimitSettleOutcome): number => {
    const info = resolveInfo(context);
    const measured = resolvedComplexity(info.fieldNodes, result, info);
    // Only a refund: what the estimate did not foresee is the estimators' to price.
    return Math.max(1, Math.min(reserved, measured));
  };
  return { cost, settle };
}

/** The resolver's `GraphQLResolveInfo` (Nest's GraphQL context: `[root, args, context, info]`). */
function resolveInfo(context: ExecutionContext): GraphQLResolveInfo {
  const info = context.getArgByIndex<GraphQLResolveInfo | undefined>(3);
  if (info?.operation === undefined)
    throw new TypeError('graphqlComplexity: only for GraphQL resolvers (no GraphQLResolveInfo)');
  return info;
}

/**
 * A root field's complexity: `getComplexity` on the operation reduced to
 * this field's nodes (wherever they came from: the operation's own
 * selections, or a fragment spread at the root), with its fragments and
 * variables.
 */
function estimateRootField(info: GraphQLResolveInfo, estimators: ComplexityEstimator[]): number {
  const operation: OperationDefinitionNode = {
    ...info.operation,
    selectionSet: { kind: Kind.SELECTION_SET, selections: info.fieldNodes },
  };
  const query: DocumentNode = {
    kind: Kind.DOCUMENT,
    definitions: [operation, ...Object.values(info.fragments)],
  };
  return getComplexity({
    estimators,
    schema: info.schema,
    query,
    variables: info.variableValues as Record<string, unknown>,
    operationName: info.operation.name?.value,
  });
}
