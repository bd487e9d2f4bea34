import type { INestApplication, ModuleMetadata } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';

/** Every HTTP scenario runs on both platforms. */
export const PLATFORMS = ['express', 'fastify'] as const;
export type Platform = (typeof PLATFORMS)[number];

/** How the platform itself is set up, for the scenarios that need more than the defaults. */
export interface CreateAppOptions {
  /** Given to `new FastifyAdapter(…)` (ignored on Express), e.g. `{ trustProxy: true }`. */
  readonly fastify?: ConstructorParameters<typeof FastifyAdapter>[0];
  /** Called on the created application before `init()`, e.g. Express's `app.set('trust proxy', 1)`. */
  readonly beforeInit?: (app: INestApplication, platform: Platform) => void | Promise<void>;
}

/** Boot a real Nest application (real HTTP server, no listen needed for supertest). */
export async function createApp(
  platform: Platform,
  metadata: ModuleMetadata,
  options: CreateAppOptions = {},
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule(metadata).compile();
  const adapter =
    platform === 'express' ? new ExpressAdapter() : new FastifyAdapter(options.fastify);
  const app = moduleRef.createNestApplication(adapter, { logger: false });
  await options.beforeInit?.(app, platform);
  await app.init();
  if (platform === 'fastify') await app.getHttpAdapter().getInstance().ready();
  return app;
}

/** Express's `app.set(name, value)`, on an application created with {@link createApp}. */
export function expressSet(app: INestApplication, name: string, value: unknown): void {
  (app.getHttpAdapter().getInstance() as { set(name: string, value: unknown): void }).set(
    name,
    value,
  );
}

/**
 * The platform's own trust-proxy setting, as {@link CreateAppOptions}: Express
 * `app.set('trust proxy', value)`, Fastify `new FastifyAdapter({ trustProxy: value })`.
 * No hop count: Fastify (5.12) takes none, see `expressSet` for Express's.
 */
export function platformTrustProxy(value: boolean | string): CreateAppOptions {
  return {
    fastify: { trustProxy: value },
    beforeInit: (app, platform) => {
      if (platform === 'express') expressSet(app, 'trust proxy', value);
    },
  };
}
