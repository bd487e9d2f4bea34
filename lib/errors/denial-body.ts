import { HttpStatus } from '@nestjs/common';
import type { ErrorFormat } from '../interfaces/rate-limit-module-options.interface.js';

/** The IETF draft's problem type for a request over a quota (draft-ietf-httpapi-ratelimit-headers, "Problem Types"). */
export const QUOTA_EXCEEDED_TYPE = 'https://iana.org/assignments/http-problem-types#quota-exceeded';

/** The media type of an RFC 9457 problem. */
export const PROBLEM_JSON = 'application/problem+json';

/** What a 429's body says. */
export interface DenialBodyInput {
  /** Seconds until the request could succeed; `undefined` when it never can (cost above the burst). */
  readonly retryAfter: number | undefined;
  readonly message: string;
  /** Names of the limits that denied the request. */
  readonly violated: readonly string[];
}

/**
 * The body of a 429 in the module's `errorFormat`: Nest's shape
 * `{ statusCode, message, retryAfter }`, or an RFC 9457 problem of the
 * draft's quota-exceeded type, whose `violated-policies` are the names used
 * in the `RateLimit` and `RateLimit-Policy` headers.
 */
export function denialBody(format: ErrorFormat, input: DenialBodyInput): object {
  const retryAfter = input.retryAfter ?? null;
  if (format === 'nest')
    return { statusCode: HttpStatus.TOO_MANY_REQUESTS, message: input.message, retryAfter };
  return {
    type: QUOTA_EXCEEDED_TYPE,
    title: 'Request cannot be satisfied as assigned quota has been exceeded',
    status: HttpStatus.TOO_MANY_REQUESTS,
    detail:
      input.retryAfter === undefined
        ? `${input.message}: waiting cannot help`
        : `${input.message}: retry in ${input.retryAfter} second${input.retryAfter === 1 ? '' : 's'}`,
    'violated-policies': input.violated,
    retryAfter,
  };
}
