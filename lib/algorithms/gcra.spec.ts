import { gcraConsume } from './gcra.js';

describe('smoke', () => {
  it('admits then denies', () => {
    const a = gcraConsume(undefined, 0, { rate: 1, burst: 1 }, 1);
    expect(a.decision.allowed).toBe(true);
    const b = gcraConsume(a.tat, 0, { rate: 1, burst: 1 }, 1);
    expect(b.decision).toMatchObject({ allowed: false, retryAfterMs: 1000 });
  });
});
