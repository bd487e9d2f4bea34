import { expect } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import type { ManualClock } from 'nestjs-holdup';
import { seconds } from 'nestjs-holdup/throttler-compat';
import request from 'supertest';

/** GET with the tracker the app's guard subclass reads (`x-api-key`). */
export function getter(app: () => INestApplication) {
  return (path: string, key = 'alice') =>
    request(app().getHttpServer()).get(path).set('x-api-key', key);
}

/**
 * The compat app's window and block, whatever the store (`compat-app.ts`:
 * `@Throttle({ default: { limit: 2, ttl: 10 s, blockDuration: 30 s } })`):
 * throttler's headers, message and `Retry-After`; a retry during the block
 * does not start it over; a fresh window at the first hit after it.
 */
export async function windowAndBlockScenario(
  get: ReturnType<typeof getter>,
  clock: ManualClock,
): Promise<void> {
  const first = await get('/items').expect(200);
  expect(first.headers).toMatchObject({
    'x-ratelimit-limit': '2',
    'x-ratelimit-remaining': '1',
    'x-ratelimit-reset': '10',
  });
  await get('/items').expect(200);
  const denied = await get('/items').expect(429);
  expect(denied.body).toEqual({
    statusCode: 429,
    message: 'ThrottlerException: Too Many Requests',
  });
  expect(denied.headers['retry-after']).toBe('30');
  await get('/items', 'bob').expect(200); // another tracker, its own window
  clock.advance(seconds(29));
  const still = await get('/items').expect(429); // the block outlasts the 10 s window
  expect(still.headers['retry-after']).toBe('1'); // a retry does not start the block over
  clock.advance(seconds(1));
  const after = await get('/items').expect(200); // a fresh window at the first hit after the block
  expect(after.headers['x-ratelimit-remaining']).toBe('1');
}
