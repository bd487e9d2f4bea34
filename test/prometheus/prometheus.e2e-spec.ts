/**
 * The sample app's `/metrics` scraped by a real Prometheus server while the
 * test drives traffic: Prometheus' own API then counts exactly the 429s and
 * the 200s the test received, and every query of the committed Grafana
 * dashboard (docs/grafana-dashboard.json) runs against the scraped data.
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { AppModule } from '../../sample-app/app.module.js';
import { createApp } from '../utils/create-app.js';
import { startPrometheus, type PrometheusServer } from '../utils/prometheus-harness.js';

const DASHBOARD = JSON.parse(
  readFileSync(new URL('../../docs/grafana-dashboard.json', import.meta.url), 'utf8'),
) as {
  panels: { title: string; targets: { expr: string }[] }[];
};

describe('Prometheus scraping the sample app (memory store, Express)', () => {
  let app: INestApplication;
  let prometheus: PrometheusServer;

  beforeAll(async () => {
    process.env.RATE_LIMIT_STORE = 'memory';
    app = await createApp('express', { imports: [AppModule] });
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as AddressInfo;
    prometheus = await startPrometheus([`127.0.0.1:${port}`]);
  }, 60_000);
  afterAll(async () => {
    await prometheus?.stop();
    await app?.close();
    delete process.env.RATE_LIMIT_STORE;
  });

  it("counts exactly the 429s and 200s the clients received, in Prometheus' own API", async () => {
    const statuses: number[] = [];
    for (const client of ['203.0.113.1', '203.0.113.2']) {
      for (let i = 0; i < 13; i++)
        statuses.push(
          (await request(app.getHttpServer()).get('/products').set('x-forwarded-for', client))
            .status,
        );
    }
    const denied = statuses.filter((s) => s === 429).length;
    const admitted = statuses.filter((s) => s === 200).length;
    expect([admitted, denied]).toEqual([10, 16]); // no trustProxy: one address, a burst of 10
    const after = Date.now();
    await prometheus.scrapedSince(after);
    const [deniedSeries] = await prometheus.query(
      'sum(rate_limiting_requests_total{result="denied"})',
    );
    const [admittedSeries] = await prometheus.query(
      'sum(rate_limiting_requests_total{result="admitted",policy="default"})',
    );
    expect(deniedSeries?.value).toBe(denied);
    expect(admittedSeries?.value).toBe(admitted);
  }, 60_000);

  it('every query of the Grafana dashboard is valid PromQL over the scraped series', async () => {
    const queries = DASHBOARD.panels.flatMap((panel) =>
      panel.targets.map((target) => [panel.title, target.expr] as const),
    );
    expect(queries.length).toBeGreaterThanOrEqual(9);
    for (const [title, expression] of queries) {
      await expect(prometheus.query(expression).then(() => title)).resolves.toBe(title);
    }
    // increase() needs two samples of a series: one more scrape.
    await prometheus.scrapedSince(Date.now());
    const [deniedByLimit] = await prometheus.query(DASHBOARD.panels[2]!.targets[0]!.expr);
    expect(deniedByLimit?.metric).toEqual({ policy: 'default' });
  }, 30_000);
});
