import { Controller, Get } from '@nestjs/common';
import {
  RateLimit,
  type RateLimitEventMap,
  type RateLimitEvents,
  type RateLimitTypes,
} from 'nestjs-holdup';

/** One route per event the module sends on a request. */
@Controller('events')
export class EventsController {
  /** Two requests per caller, then denied. */
  @RateLimit({ name: 'tight', rate: '1/min', burst: 2 })
  @Get('limited')
  limited(): string {
    return 'ok';
  }

  /** Never denies: its limit is a shadow one, a would-be denial after the first request. */
  @RateLimit({ name: 'watch', rate: '1/min', burst: 1, shadow: true })
  @Get('shadowed')
  shadowed(): string {
    return 'ok';
  }

  /** Over the limit once, blocked for 15 minutes. */
  @RateLimit({ name: 'abuse', rate: '10/min', burst: 2, blockDuration: '15min' })
  @Get('penalized')
  penalized(): string {
    return 'ok';
  }

  /** An adaptive limit the test moves through AdaptiveRateProvider. */
  @RateLimit({
    name: 'tuned',
    rate: 100,
    burst: 10,
    key: 'global',
    adaptive: { min: 10, max: 100, jitter: 0, minOutcomes: 1 },
  })
  @Get('tuned')
  tuned(): string {
    return 'ok';
  }
}

/** Records the events of the given types, in order. */
export function record<T extends RateLimitTypes.RateLimitEventType>(
  events: RateLimitEvents,
  ...types: T[]
): { seen: { type: T; event: RateLimitEventMap[T] }[]; stop(): void } {
  const seen: { type: T; event: RateLimitEventMap[T] }[] = [];
  const stops = types.map((type) => events.on(type, (event) => void seen.push({ type, event })));
  return { seen, stop: () => stops.forEach((stop) => stop()) };
}

/** Events are delivered after the publishing turn of the event loop: wait for `done`, at most `ms`. */
export async function until(done: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for events');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A few turns of the event loop: long enough for any event published before to be delivered. */
export async function settled(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
}
