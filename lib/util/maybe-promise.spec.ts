import { isPromiseLike, settle } from './maybe-promise.js';

describe('settle', () => {
  const double = (state: { calls: number }, value: number) => {
    state.calls++;
    return value * 2;
  };
  const fallback = (_state: { calls: number }, error: unknown) => -String(error).length;

  it('answers a value synchronously, without creating a promise', () => {
    const state = { calls: 0 };
    const answer = settle(21, state, double, fallback);
    expect(answer).toBe(42);
    expect(isPromiseLike(answer)).toBe(false);
    expect(state.calls).toBe(1);
  });

  it('answers a promise with a promise of the step', async () => {
    const answer = settle(Promise.resolve(21), { calls: 0 }, double, fallback);
    expect(isPromiseLike(answer)).toBe(true);
    await expect(answer).resolves.toBe(42);
  });

  it('hands a rejection to onError, whose answer (or throw) settles the step', async () => {
    await expect(
      settle(Promise.reject(new Error('x')), { calls: 0 }, double, fallback),
    ).resolves.toBe(-'Error: x'.length);
    const rethrow = (_s: unknown, error: unknown): number => {
      throw error;
    };
    await expect(settle(Promise.reject(new Error('y')), {}, () => 0, rethrow)).rejects.toThrow('y');
  });

  it('lets a synchronous step throw synchronously', () => {
    expect(() =>
      settle(
        1,
        {},
        () => {
          throw new Error('denied');
        },
        () => 0,
      ),
    ).toThrow('denied');
  });
});
