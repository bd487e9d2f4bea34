import { MemoryStore, type MemoryStoreOptions } from './memory.store.js';

describe('MemoryStore options', () => {
  it('are accepted when known', () => {
    expect(() => new MemoryStore({ maxKeys: 10 })).not.toThrow();
    expect(() => new MemoryStore({})).not.toThrow();
    expect(() => new MemoryStore()).not.toThrow();
  });

  it('refuse an unknown name, suggesting the closest known one', () => {
    expect(() => new MemoryStore({ maxkeys: 10 } as MemoryStoreOptions)).toThrow(
      new TypeError('MemoryStore: maxkeys is not an option (did you mean maxKeys?)'),
    );
    expect(() => new MemoryStore({ ttlMs: 10 } as MemoryStoreOptions)).toThrow(
      new TypeError('MemoryStore: ttlMs is not an option (known options: maxKeys)'),
    );
  });

  it('show a wrong value by type', () => {
    expect(() => new MemoryStore({ maxKeys: '10' as never })).toThrow(
      'MemoryStore: maxKeys must be a positive integer, got "10"',
    );
  });
});
