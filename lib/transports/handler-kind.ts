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
const RESOLVER_NAME_METADATA = 'graphql:resolver_name';

/** The context type (`ExecutionContext.getType()`) a handler runs in. */
export type HandlerKind = 'http' | 'rpc' | 'ws' | 'graphql';

/** What start-up discovery found about a handler. */
export interface HandlerDescription {
  readonly kind: HandlerKind;
  /** An `@EventPattern()` handler: nobody waits for its answer. */
  readonly event: boolean;
}

/**
 * The kind of a handler, read from the metadata its decorators left
 * (`@Get()`, `@MessagePattern()`, `@SubscribeMessage()` in a gateway,
 * `@Query()`/`@Mutation()`/`@ResolveField()`...); `undefined` for a method
 * that no transport calls.
 */
export function describeHandler(target: object, handler: object): HandlerDescription | undefined {
  if (Reflect.getMetadata(PATH_METADATA, handler) !== undefined)
    return { kind: 'http', event: false };
  if (Reflect.getMetadata(PATTERN_METADATA, handler) !== undefined) {
    return {
      kind: 'rpc',
      event: Reflect.getMetadata(PATTERN_HANDLER_METADATA, handler) === EVENT_HANDLER,
    };
  }
  if (
    Reflect.getMetadata(MESSAGE_MAPPING_METADATA, handler) === true &&
    Reflect.getMetadata(GATEWAY_METADATA, target) === true
  ) {
    return { kind: 'ws', event: false };
  }
  if (Reflect.getMetadata(RESOLVER_NAME_METADATA, handler) !== undefined)
    return { kind: 'graphql', event: false };
  return undefined;
}
