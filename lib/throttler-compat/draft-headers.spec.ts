import { addDraftMember, draftPolicy, draftRateLimit } from './draft-headers.js';

const member = (name: string, remaining: number) => ({
  name,
  quota: 10,
  windowSeconds: 60,
  remaining,
  resetSeconds: 42,
});

describe('draft headers of the compat guard', () => {
  it('one member per throttler on a response, in the order they were decided', () => {
    const res = {};
    addDraftMember(res, member('short', 9));
    const members = addDraftMember(res, member('long', 99));
    expect(draftPolicy(members)).toBe('"short";q=10;w=60, "long";q=10;w=60');
    expect(draftRateLimit(members)).toBe('"short";r=9;t=42, "long";r=99;t=42');
  });

  it('replaces a member decided again (a guard bound twice), never repeats it', () => {
    const res = {};
    addDraftMember(res, member('default', 9));
    const members = addDraftMember(res, member('default', 8));
    expect(draftRateLimit(members)).toBe('"default";r=8;t=42');
  });

  it('escapes names as structured-field strings (throttler names are free text)', () => {
    const members = addDraftMember({}, member('a "quoted" \\ name é', 1));
    expect(draftPolicy(members)).toBe('"a \\"quoted\\" \\\\ name ?";q=10;w=60');
  });
});
