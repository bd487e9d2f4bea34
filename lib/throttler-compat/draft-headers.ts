/**
 * IETF draft -11's `RateLimit` and `RateLimit-Policy` for the compat guard
 * (`headers: 'draft' | 'both'`): one list member per throttler that applied
 * to the request, as `RateLimitModule` writes one per limit. Throttler's
 * guard decides throttler by throttler, so each call adds its member to the
 * ones already written for this response and writes both headers again.
 */

/** One throttler's member: its quota and window, what is left, and for how long. */
export interface DraftMember {
  readonly name: string;
  /** `q`: the throttler's limit. */
  readonly quota: number;
  /** `w`: its window (ttl) in whole seconds, at least 1. */
  readonly windowSeconds: number;
  /** `r`: hits left in the current window (0 when denied). */
  readonly remaining: number;
  /** `t`: seconds until the window (or the block) ends, at least 1. */
  readonly resetSeconds: number;
}

const MEMBERS = Symbol('nestjs-holdup:throttler-draft-members');

/** The members written so far on `res` (this response), with `member` added. */
export function addDraftMember(res: object, member: DraftMember): readonly DraftMember[] {
  const holder = res as { [MEMBERS]?: DraftMember[] };
  const members = (holder[MEMBERS] ??= []);
  // A guard bound twice decides a throttler twice: its member is replaced, not repeated.
  const at = members.findIndex((written) => written.name === member.name);
  if (at >= 0) members[at] = member;
  else members.push(member);
  return members;
}

/** `RateLimit-Policy: "<name>";q=<limit>;w=<ttl s>, ...` */
export function draftPolicy(members: readonly DraftMember[]): string {
  return members.map((m) => `${sfString(m.name)};q=${m.quota};w=${m.windowSeconds}`).join(', ');
}

/** `RateLimit: "<name>";r=<left>;t=<s>, ...` */
export function draftRateLimit(members: readonly DraftMember[]): string {
  return members.map((m) => `${sfString(m.name)};r=${m.remaining};t=${m.resetSeconds}`).join(', ');
}

/**
 * A structured-field string (RFC 9651): `"` and `\` escaped; throttler names
 * are free text, so characters a string cannot hold become `?`.
 */
function sfString(text: string): string {
  return `"${text.replace(/[^\x20-\x7e]/g, '?').replace(/["\\]/g, '\\$&')}"`;
}
