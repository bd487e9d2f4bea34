import { PATH_METADATA } from '@nestjs/common/constants.js';

/**
 * Metadata keys the Nest transport packages put on handlers, spelled out
 * here so that the module never imports `@nestjs/microservices`,
 * `@nestjs/websockets` or `@nestjs/graphql` to find out which handlers
 * exist (they are optional peers).
 */
const PATTERN_METADATA = 'microservices:pattern';
const PATTERN_HANDLER_METADATA = 'microservices:handler_type';
/** `PatternHandler.EVENT` in `@nestjs/microservices`. */
const EVENT_HANDLER = 2;
const MESSAGE_MAPPING_METADATA = 'websockets:message_mapping';
const GATEWAY_METADATA = 'websockets:is_gateway';
/** Set by `@Query()`, `@Mutation()`, `@Subscription()` (with or without a name) and `@Resolver()`. */
const RESOLVER_TYPE_METADATA = 'graphql:resolver_type';
/** `@ResolveField()`. */
const RESOLVER_PROPERTY_METADATA = 'graphql:resolve_property';
/** `@ResolveReference()` (federation). */
const RESOLVER_REFERENCE_METADATA = 'graphql:resolve_reference';
/** The types whose resolvers Nest runs with every enhancer; any other is a field resolver. */
const ROOT_TYPES: ReadonlySet<unknown> = new Set(['Query', 'Mutation', 'Subscription']);

/** The context type (`ExecutionContext.getType()`) a handler runs in. */
export type HandlerKind = 'http' | 'rpc' | 'ws' | 'graphql';

/** What start-up discovery found about a handler. */
export interface HandlerDescription {
  readonly kind: HandlerKind;
  /** An `@EventPattern()` handler: nobody waits for its answer. */
  readonly event: boolean;
  /**
   * A GraphQL field resolver (`@ResolveField()`, `@ResolveReference()`):
   * Nest runs guards and interceptors on it only when
   * `GraphQLModule.forRoot({ fieldResolverEnhancers })` names them.
   */
  readonly field: boolean;
}

/**
 * The kind of a handler, read from the metadata its decorators left
 * (`@Get()`, `@MessagePattern()`, `@SubscribeMessage()` in a gateway,
 * `@Query()`/`@Mutation()`/`@ResolveField()`..., code-first or
 * schema-first); `undefined` for a method
 * that no transport calls.
 */
export function describeHandler(target: object, handler: object): HandlerDescription | undefined {
  if (Reflect.getMetadata(PATH_METADATA, handler) !== undefined)
    return { kind: 'http', event: false, field: false };
  if (Reflect.getMetadata(PATTERN_METADATA, handler) !== undefined) {
    return {
      kind: 'rpc',
      event: Reflect.getMetadata(PATTERN_HANDLER_METADATA, handler) === EVENT_HANDLER,
      field: false,
    };
  }
  if (
    Reflect.getMetadata(MESSAGE_MAPPING_METADATA, handler) === true &&
    Reflect.getMetadata(GATEWAY_METADATA, target) === true
  ) {
    return { kind: 'ws', event: false, field: false };
  }
  // Not the resolver's name: code-first `@Query(() => T)` leaves it undefined.
  const type: unknown = Reflect.getMetadata(RESOLVER_TYPE_METADATA, handler);
  if (
    type !== undefined ||
    Reflect.getMetadata(RESOLVER_PROPERTY_METADATA, handler) === true ||
    Reflect.getMetadata(RESOLVER_REFERENCE_METADATA, handler) === true
  )
    return { kind: 'graphql', event: false, field: !ROOT_TYPES.has(type) };
  return undefined;
}
