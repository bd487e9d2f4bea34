/**
 * The Lua scripts against the algorithm's scenario table: every scenario of
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
import { ON_TEST_CLOCK } from '../../test/utils/test-clock-store-options.js';
import { connectSharedClient } from '../../test/utils/redis-client.js';
import { ModelStore } from '../../lib/store/contract/model-store.js';
import { RedisStore } from './redis.store.js';

let client: Redis;
let store: RedisStore;

beforeAll(async () => {
  client = await connectSharedClient();
  store = new RedisStore({ client, keyPrefix: uniquePrefix('lua-scenarios'), ...ON_TEST_CLOCK });
});

afterAll(async () => {
  await store.close();
  await client.quit();
});

/**
 * A bucket that never denies, beside the scenario's in `'general'` runs: the
 * request then has two checks, so the general `consume` script decides it;
 * alone (`'single'`), `consume_one` does.
 */
const COMPANION = { key: 'companion', limit: tokenBucket(1e6, 1e9), cost: 1 };

async function runScenario(scenario: GcraScenario, script: 'single' | 'general'): Promise<void> {
  const model = new ModelStore();
  const check = {
    key: `scenario:${script}:${scenario.name}`,
    limit: tokenBucket(scenario.limit.rate, scenario.limit.burst),
  };
  for (const [index, step] of scenario.steps.entries()) {
    const checks = [{ ...check, cost: step.cost }];
    if (script === 'general') checks.push({ ...COMPANION, key: `companion:${scenario.name}` });
    const { decisions: all } = await store.consume({ checks, now: step.at });
    const decisions = all.slice(0, 1);
    const request = { checks: checks.slice(0, 1), now: step.at };
    const decision = decisions[0]!;
    const got: Record<string, unknown> = { step: index };
    for (const field of Object.keys(step.expect))
      got[field] = decision[field as keyof typeof decision];
    // The step index names the failing step; toEqual compares numbers with Object.is.
    expect(got).toEqual({ step: index, ...step.expect });
    // The model computes in its own time frame: milliseconds agree to within 1 µs.
    expect({ step: index, decisions }).toEqual({
      step: index,
      decisions: approximately(model.consume(request)).decisions,
    });
  }
}

describe('Lua script vs the GCRA scenario table', () => {
  it('has scenarios to run', () => {
    expect(gcraScenarios.length).toBeGreaterThan(0);
  });

  it.each(gcraScenarios.map((scenario) => [scenario.name, scenario] as const))(
    '%s (consume_one)',
    (_name: string, scenario: GcraScenario) => runScenario(scenario, 'single'),
  );

  it.each(gcraScenarios.map((scenario) => [scenario.name, scenario] as const))(
    '%s (consume, beside a second check)',
    (_name: string, scenario: GcraScenario) => runScenario(scenario, 'general'),
  );
});
