// `nestjs-holdup/graphql`: GraphQL helpers. Needs the optional peers `graphql`
// and `graphql-query-complexity`; the root entry point never imports them.
export {
  graphqlComplexity,
  type GraphqlComplexityOptions,
  type GraphqlComplexityLimit,
} from './complexity-budget.js';
export { resolvedComplexity, type OperationParts } from './resolved-complexity.js';
