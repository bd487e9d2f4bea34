import { describeValue } from '../errors/option-error.js';
import type { LimitPolicy } from './limit-policy.js';

/**
 * `shadow` (the limit's, else the module's): a shadow limit is decided after
 * the others admitted the request and never denies (`shadow.ts`), so nothing
 * that acts on a denial or after the handler can apply to it.
 */
export const shadowPolicy: LimitPolicy<'shadow'> = {
  options: ['shadow'],
  appliesTo: (limit) => limit.shadow,
  resolve: (options, draft, context, fail) => {
    const shadow = options.shadow ?? context.shadow ?? false;
    if (typeof shadow !== 'boolean')
      fail('shadow', `must be a boolean, got ${describeValue(shadow)}`);
    if (!shadow) return { shadow: false };
    if (draft.adaptive !== undefined)
      fail(
        'shadow',
        'cannot be combined with adaptive: a shadow limit has no outcomes to adapt to',
      );
    if (draft.dynamic !== undefined)
      fail('shadow', 'cannot be combined with a rate or burst function');
    if (draft.charge !== undefined)
      fail(
        'shadow',
        `cannot be combined with charge: '${draft.charge.mode}' (its tokens would never be given back)`,
      );
    return { shadow: true };
  },
};
