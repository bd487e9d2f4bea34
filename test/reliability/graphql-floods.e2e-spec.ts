/**
 * GraphQL floods, on Apollo (Express) and Mercurius (Fastify), real HTTP:
 *
 * - A field flood: a limited `@ResolveField` under a list of 100 items, 5
 *   requests. Nest runs guards on field resolvers only with
 *   `GraphQLModule.forRoot({ fieldResolverEnhancers: ['guards'] })`; without
 *   it the limit would never run, so the module refuses to start, naming the
 *   setting and the field. With it, the field's limit (5 per minute) admits 5
 *   of the 500 calls.
 * - An alias flood: one request with 1,000 aliases of a burst-1 field. Each
 *   refused alias is a GraphQL error, not an application error: nothing is
 *   logged for it (Nest's exception handler logged each one at ERROR with
 *   its stack before).
 *
 * `HOLDUP_REPORT=1` prints the figures.
 */
import request from 'supertest';
import type { INestApplication, LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ManualClock, RateLimitModule } from 'nestjs-holdup';
import { GRAPHQL_DRIVERS, type FieldResolverEnhancer } from '../graphql/graphql-drivers.js';
import { CATALOG_TYPE_DEFS, CatalogResolver, fieldCalls } from '../graphql/catalog.resolver.js';

/** Every line Nest's loggers write, with its size (message, context and stack). */
class CountingLogger implements LoggerService {
  readonly lines: { level: string; bytes: number }[] = [];
  private record(level: string, args: unknown[]): void {
    const text = args
      .map((arg) => (arg instanceof Error ? `${arg.message}\n${arg.stack}` : String(arg)))
      .join(' ');
    this.lines.push({ level, bytes: Buffer.byteLength(text) });
  }
  log = (...args: unknown[]) => this.record('log', args);
  error = (...args: unknown[]) => this.record('error', args);
  warn = (...args: unknown[]) => this.record('warn', args);
  debug = (...args: unknown[]) => this.record('debug', args);
  verbose = (...args: unknown[]) => this.record('verbose', args);
  fatal = (...args: unknown[]) => this.record('fatal', args);
  clear(): void {
    this.lines.length = 0;
  }
}

const report = (line: string) => {
  if (process.env['HOLDUP_REPORT']) process.stdout.write(`${line}\n`);
};

describe.each(GRAPHQL_DRIVERS)('GraphQL floods, $name', (driver) => {
  let app: INestApplication | undefined;
  const logger = new CountingLogger();

  const boot = async (fieldResolverEnhancers: FieldResolverEnhancer[]) => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        RateLimitModule.forRoot({ clock: new ManualClock(1_700_000_000_000) }),
        driver.graphql({ typeDefs: CATALOG_TYPE_DEFS }, fieldResolverEnhancers),
      ],
      providers: [CatalogResolver],
    }).compile();
    app = moduleRef.createNestApplication(driver.adapter(), { logger });
    await app.init();
    if (driver.name === 'Mercurius on Fastify') await app.getHttpAdapter().getInstance().ready();
  };
  afterEach(async () => {
    await app?.close();
    app = undefined;
    logger.clear();
  });

  const query = async (text: string) => {
    const res = await request(app!.getHttpServer()).post('/graphql').send({ query: text });
    return res.body as {
      data: Record<string, unknown> | null;
      errors?: { extensions?: { code?: string } }[];
    };
  };

  it('a limited field under a list: refused at start-up without fieldResolverEnhancers guards; with them, 5 of 500 calls admitted', async () => {
    await expect(boot([])).rejects.toThrow(
      /CatalogResolver\.price.*fieldResolverEnhancers: \['guards'\]/s,
    );
    await app?.close();
    app = undefined;

    await boot(['guards']);
    fieldCalls.price = 0;
    let admitted = 0;
    let refused = 0;
    for (let i = 0; i < 5; i++) {
      const answer = await query('{ items(count: 100) { id price } }');
      const items = (answer.data?.['items'] ?? []) as { price: number | null }[];
      expect(items).toHaveLength(100);
      admitted += items.filter((item) => item.price !== null).length;
      refused += (answer.errors ?? []).filter(
        (error) => error.extensions?.code === 'TOO_MANY_REQUESTS',
      ).length;
    }
    report(
      `${driver.name}: field flood, 5 requests x 100 items: ${admitted} admitted (bound 5), ${refused} refused, ${fieldCalls.price} calls ran`,
    );
    expect(admitted).toBe(5);
    expect(fieldCalls.price).toBe(5);
    expect(refused).toBe(495);
  });

  it('1,000 aliases of a burst-1 field: 999 refusals and no log line', async () => {
    await boot(['guards']);
    const aliases = Array.from({ length: 1_000 }, (_, i) => `a${i}: cheap`).join(' ');
    logger.clear();
    const answer = await query(`{ ${aliases} }`);
    const values = Object.values(answer.data ?? {});
    expect(values.filter((value) => value !== null)).toHaveLength(1);
    expect(
      answer.errors?.filter((error) => error.extensions?.code === 'TOO_MANY_REQUESTS'),
    ).toHaveLength(999);
    const bytes = logger.lines.reduce((sum, line) => sum + line.bytes, 0);
    report(
      `${driver.name}: 1,000 aliases: ${logger.lines.length} log lines (${logger.lines.filter((line) => line.level === 'error').length} at ERROR), ${bytes} bytes`,
    );
    expect(logger.lines.length).toBe(0);
  });
});
