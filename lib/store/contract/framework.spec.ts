import { MemoryStore } from '../../../adapters/memory/memory.store.js';
import {
  describeStoreContract,
  describeWindowStoreContract,
  type StoreContractFramework,
} from '../index.js';
import { contractFramework } from './framework.js';

/** A framework that records what the suites register, and runs nothing. */
function recorder(): { framework: StoreContractFramework; describes: string[]; tests: string[] } {
  const describes: string[] = [];
  const tests: string[] = [];
  const framework: StoreContractFramework = {
    describe: (name, body) => {
      describes.push(name);
      body();
    },
    it: (name) => tests.push(name),
    beforeEach: () => undefined,
    afterEach: () => undefined,
    expect,
  };
  return { framework, describes, tests };
}

describe('the contract suites without test-framework globals', () => {
  it('register with the framework given', () => {
    const { framework, describes, tests } = recorder();
    describeStoreContract('MyStore', () => new MemoryStore(), { framework });
    describeWindowStoreContract('MyStore', () => new MemoryStore(), { framework });
    expect(describes).toEqual([
      'MyStore (store contract)',
      'MyStore (window contract: fixed-window)',
      'MyStore (window contract: fixed-window anchored at the first hit)',
      'MyStore (window contract: sliding-window)',
      'MyStore (window contract: fixed-window on calendar days (Europe/Paris))',
    ]);
    expect(tests).toContain('admits all checks or none');
    // The anchored cases register with the framework given too (not with the globals).
    expect(tests).toContain('anchored window: starts at the first hit, not on an epoch multiple');
    expect(tests.length).toBeGreaterThan(20);
  });

  it('name what is missing', () => {
    const { framework } = recorder();
    const { expect: _, ...partial } = framework;
    expect(() =>
      contractFramework(partial as unknown as StoreContractFramework, 'describeStoreContract'),
    ).toThrow(
      /describeStoreContract registers tests with describe, it, beforeEach, afterEach and expect: expect missing from the framework given/,
    );
  });
});
