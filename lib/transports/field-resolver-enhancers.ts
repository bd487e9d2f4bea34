import type { ModuleRef } from '@nestjs/core';

/** `GRAPHQL_MODULE_OPTIONS` of `@nestjs/graphql`, spelled out: the module never imports the optional peer. */
const GRAPHQL_MODULE_OPTIONS = 'GqlModuleOptions';

/** The enhancers the module needs on a limited field resolver. */
export type FieldResolverEnhancer = 'guards' | 'interceptors';

/** A GraphQL field resolver with limits, and the enhancers its limits need to run. */
export interface LimitedFieldResolver {
  /** `Class.method`. */
  readonly where: string;
  readonly needs: readonly FieldResolverEnhancer[];
}

/** How many fields the error names before it says "and N more". */
const NAMED = 5;

/**
 * Refuses to start when a limited GraphQL field resolver would not be
 * limited. Nest runs guards and interceptors on a field resolver
 * (`@ResolveField()`, `@ResolveReference()`) only when
 * `GraphQLModule.forRoot({ fieldResolverEnhancers })` names them; without
 * them it calls the method directly, and its limits never run, with no sign
 * of it (a 5-per-minute field under a list of 100 items resolved 500 times
 * in 5 requests). Limits are decided by the guard; `concurrency` slots,
 * `charge` and adaptive outcomes need the interceptor too.
 *
 * Read from the options of every `GraphQLModule` in the application (each
 * must name what is needed); nothing is checked without one, since nothing
 * then calls resolvers.
 *
 * @internal
 */
export function checkFieldResolverEnhancers(
  moduleRef: ModuleRef,
  fields: readonly LimitedFieldResolver[],
): void {
  if (fields.length === 0) return;
  const modules = graphqlModuleOptions(moduleRef);
  if (modules.length === 0) return;
  const missing = (enhancer: FieldResolverEnhancer) =>
    modules.some((options) => !(options.fieldResolverEnhancers ?? []).includes(enhancer));
  const unmet = (['guards', 'interceptors'] as const).filter(missing);
  const refused = fields.filter((field) => field.needs.some((need) => unmet.includes(need)));
  if (refused.length === 0) return;
  const needed = unmet.filter((enhancer) =>
    refused.some((field) => field.needs.includes(enhancer)),
  );
  const named =
    refused
      .slice(0, NAMED)
      .map((field) => field.where)
      .join(', ') + (refused.length > NAMED ? ` and ${refused.length - NAMED} more` : '');
  throw new Error(
    `RateLimit: ${named}: GraphQL field resolver(s) with limits, which Nest calls without ` +
      `${needed.join(' or ')} unless GraphQLModule.forRoot({ fieldResolverEnhancers: [${needed
        .map((enhancer) => `'${enhancer}'`)
        .join(', ')}] }); their limits would never run. Add the setting, or declare the limit ` +
      'on the query or mutation instead.',
  );
}

function graphqlModuleOptions(
  moduleRef: ModuleRef,
): { readonly fieldResolverEnhancers?: readonly string[] }[] {
  try {
    return moduleRef
      .get<unknown, unknown>(GRAPHQL_MODULE_OPTIONS, { strict: false, each: true })
      .filter(
        (options): options is { fieldResolverEnhancers?: readonly string[] } =>
          typeof options === 'object' && options !== null,
      );
  } catch {
    // No GraphQL module: nothing calls resolvers.
    return [];
  }
}
