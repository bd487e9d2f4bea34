import { failModeProblem, strictestFailMode } from './fail-mode.js';

describe('fail modes', () => {
  it('combines a request limits by strictness: closed, then local, then open', () => {
    expect(strictestFailMode(['open', 'open'])).toBe('open');
    expect(strictestFailMode(['open', 'local'])).toBe('local');
    expect(strictestFailMode(['local', 'closed', 'open'])).toBe('closed');
    expect(strictestFailMode([])).toBe('open');
  });

  it("accepts 'local' only with a store that can decide locally", () => {
    expect(failModeProblem('open', false)).toBeUndefined();
    expect(failModeProblem('closed', false)).toBeUndefined();
    expect(failModeProblem('local', true)).toBeUndefined();
    expect(failModeProblem('local', false)).toMatch(
      /'local' needs a store that can decide locally/,
    );
    expect(failModeProblem('maybe', true)).toBe(`must be 'open', 'closed' or 'local', got "maybe"`);
  });
});
