import type { DynamicModule } from '@nestjs/common';
import type { AbstractHttpAdapter } from '@nestjs/core';
import { GraphQLModule } from '@nestjs/graphql';
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { MercuriusDriver, type MercuriusDriverConfig } from '@nestjs/mercurius';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';

/** What Nest runs on field resolvers besides the resolver itself. */
export type FieldResolverEnhancer = 'guards' | 'interceptors' | 'filters';

/** The schema: type definitions (schema-first), or generated from the resolvers (code-first). */
export type GraphqlSchema = { readonly typeDefs: string } | { readonly autoSchemaFile: true };

/** One GraphQL driver on its platform. */
export interface GraphqlDriver {
  readonly name: string;
  graphql(schema: GraphqlSchema, fieldResolverEnhancers: FieldResolverEnhancer[]): DynamicModule;
  adapter(): AbstractHttpAdapter;
}

/**
 * The two GraphQL drivers the library supports, each on its platform:
 * Apollo on Express, Mercurius on Fastify, for `describe.each`.
 */
export const GRAPHQL_DRIVERS: readonly GraphqlDriver[] = [
  {
    name: 'Apollo on Express',
    graphql: (
      schema: GraphqlSchema,
      fieldResolverEnhancers: FieldResolverEnhancer[],
    ): DynamicModule =>
      GraphQLModule.forRoot<ApolloDriverConfig>({
        driver: ApolloDriver,
        ...schema,
        fieldResolverEnhancers,
      }),
    adapter: () => new ExpressAdapter(),
  },
  {
    name: 'Mercurius on Fastify',
    graphql: (
      schema: GraphqlSchema,
      fieldResolverEnhancers: FieldResolverEnhancer[],
    ): DynamicModule =>
      GraphQLModule.forRoot<MercuriusDriverConfig>({
        driver: MercuriusDriver,
        ...schema,
        fieldResolverEnhancers,
      }),
    adapter: () => new FastifyAdapter(),
  },
];
