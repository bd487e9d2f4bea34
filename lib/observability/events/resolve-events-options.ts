import { describeValue, optionError } from '../../errors/option-error.js';
import { optionNames, rejectUnknownOptions } from '../../errors/unknown-options.js';
import type {
  RateLimitEventsOptions,
  ResolvedEventsOptions,
} from '../../interfaces/events-options.interface.js';

const EVENTS_OPTIONS = optionNames<RateLimitEventsOptions>({ eventEmitter: true });

/** Validates `events` at start-up (unknown names refused, like every option). */
export function resolveEventsOptions(
  events: RateLimitEventsOptions | undefined,
): ResolvedEventsOptions {
  if (events === undefined) return { eventEmitter: false };
  if (events === null || typeof events !== 'object' || Array.isArray(events)) {
    throw optionError(
      'RateLimitModule',
      'events',
      `must be an object like { eventEmitter: true }, got ${describeValue(events)}`,
    );
  }
  rejectUnknownOptions('RateLimitModule', events, EVENTS_OPTIONS, 'events.');
  const eventEmitter = events.eventEmitter ?? false;
  if (typeof eventEmitter !== 'boolean') {
    throw optionError(
      'RateLimitModule',
      'events.eventEmitter',
      `must be a boolean, got ${describeValue(eventEmitter)}`,
    );
  }
  return { eventEmitter };
}
