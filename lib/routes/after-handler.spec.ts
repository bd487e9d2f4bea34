import { needsAfterHandler } from './after-handler.js';

describe('needsAfterHandler', () => {
  it('is true when any limit is adaptive, and only then', () => {
    expect(needsAfterHandler([])).toBe(false);
    expect(needsAfterHandler([undefined, { rate: 1 }])).toBe(false);
    expect(needsAfterHandler([{ rate: 1 }, { rate: 2, adaptive: { min: 1, max: 2 } }])).toBe(true);
  });

  it('is true with a concurrency limit: the interceptor takes and releases its slots', () => {
    expect(needsAfterHandler([{ rate: 1 }, { name: 'gen', concurrency: 2 }])).toBe(true);
    expect(needsAfterHandler([{ rate: 1, charge: 'always' }])).toBe(false);
  });
});
