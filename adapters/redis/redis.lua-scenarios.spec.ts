/**
 * The Lua script against the algorithm's scenario table: every scenario of
 * test/utils/gcra-scenarios.ts runs through a RedisStore (client time, `now` =
 * the step's `at`, one fresh key per scenario) and must give the expected
 * fields, compared with Object.is like the TypeScript runner does. Each
 * decision must also match what the pure algorithm answers for a store
 * (ModelStore): `allowed`, `remaining`, `reason` exactly, milliseconds to
 * within 1 µs (each computes in its own time frame). The two implementations
 * cannot drift apart.
 */
import type { Redis } from 'ioredis';
import { gcraScenarios, type GcraScenario } from '../../test/utils/gcra-scenarios.js';
import { tokenBucket } from '../../test/utils/checks.js';
import { approximately } from '../../test/utils/approximately.js';
import { uniquePrefix } from '../../test/utils/redis-harness.js';
import { connectSharedClient } from '../../test/utils/redis-client.js';
import { ModelStore } from '../../test/utils/store-contract.js';
import { RedisStore } from './redis.store.js';

let client: Redis;
let store: RedisStore;

beforeAll(async () => {
  client = await connectSharedClient();
  // Padding: scenario time stands still while real time passes, and some
  // buckets refill within microseconds; it never changes a decision.
  store = new RedisStore({ client, keyPrefix: uniquePrefix('lua-scenarios'), time: 'client', timeoutMs: 5_000, expiryPaddingMs: 60_000 });
});

afterAll(async () => {
  await store.close();
  await client.quit();
});

async function runScenario(scenario: GcraScenario): Promise<void> {
  const model = new ModelStore();
  const check = { key: `scenario:${scenario.name}`, limit: tokenBucket(scenario.limit.rate, scenario.limit.burst) };
  for (const [index, step] of scenario.steps.entries()) {
    const request = { checks: [{ ...check, cost: step.cost }], now: step.at };
    const { decisions } = await store.consume(request);
    const decision = decisions[0]!;
    const got: Record<string, unknown> = { step: index };
    for (const field of Object.keys(step.expect)) got[field] = decision[field as keyof typeof decision];
    // The step index names the failing step; toEqual compares numbers with Object.is.
    expect(got).toEqual({ step: index, ...step.expect });
    // The model computes in its own time frame: milliseconds agree to within 1 µs.
    expect({ step: index, decisions }).toEqual({ step: index, decisions: approximately(model.consume(request)).decisions });
  }
}

describe('Lua script vs the GCRA scenario table', () => {
  it('has scenarios to run', () => {
    expect(gcraScenarios.length).toBeGreaterThan(0);
  });

  it.each(gcraScenarios.map((scenario) => [scenario.name, scenario] as const))('%s', (_name: string, scenario: GcraScenario) =>
    runScenario(scenario),
  );
});
