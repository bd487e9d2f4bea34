/**
 * The window Lua against the window scenario table: every scenario of
 * test/utils/window-scenarios.ts runs through a RedisStore (client time,
 * `now` = the step's `at`, one fresh key per scenario) and must give the
 * expected fields exactly (Object.is), and the same decisions as the pure
 * functions (ModelStore), milliseconds to within 1 µs.
 */
import type { Redis } from 'ioredis';
import { windowScenarios, type WindowScenario } from '../../test/utils/window-scenarios.js';
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
  store = new RedisStore({ client, keyPrefix: uniquePrefix('window-scenarios'), ...ON_TEST_CLOCK });
});

afterAll(async () => {
  await store.close();
  await client.quit();
});

async function runScenario(scenario: WindowScenario): Promise<void> {
  const model = new ModelStore();
  const check = { key: `scenario:${scenario.name}`, limit: scenario.limit };
  for (const [index, step] of scenario.steps.entries()) {
    const request = { checks: [{ ...check, cost: step.cost }], now: step.at };
    const { decisions } = await store.consume(request);
    const decision = decisions[0]!;
    const got: Record<string, unknown> = { step: index };
    for (const field of Object.keys(step.expect))
      got[field] = decision[field as keyof typeof decision];
    expect(got).toEqual({ step: index, ...step.expect });
    expect({ step: index, decisions }).toEqual({
      step: index,
      decisions: approximately(model.consume(request)).decisions,
    });
  }
}

describe('Lua scripts vs the window scenario table', () => {
  it('has scenarios to run', () => {
    expect(windowScenarios.length).toBeGreaterThan(0);
  });

  it.each(windowScenarios.map((scenario) => [scenario.name, scenario] as const))(
    '%s',
    (_name: string, scenario: WindowScenario) => runScenario(scenario),
  );
});
