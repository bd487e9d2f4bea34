/**
 * `blockDuration`, through the guard: a key denied once is blocked for the
 * duration (Retry-After and `t` say until when, trying again does not extend
 * it), other keys are not touched, and one that abuses again after its block
 * is blocked again. End to end: test/penalty/.
 */
import { Controller, Get } from '@nestjs/common';
import { RateLimit } from 'nestjs-holdup';
import {
  createGuardHarness,
  type GuardHarness,
  type GuardOutcome,
} from '../utils/guard-harness.js';

@Controller('penalty')
class PenaltyController {
  @RateLimit({ name: 'abuse', rate: '10/min', burst: 2, blockDuration: '15min' })
  @Get()
  guarded() {}

  @RateLimit({ name: 'retried', rate: 1, burst: 2, blockDuration: '10s' })
  @Get('retried')
  retried() {}
}

const seen = (outcome: GuardOutcome) => [
  outcome.status,
  outcome.headers['retry-after'],
  outcome.headers['ratelimit'],
];

describe('guard: blockDuration', () => {
  let h: GuardHarness;
  beforeEach(async () => {
    h = await createGuardHarness(PenaltyController);
  });
  afterEach(() => h.close());

  it('denied once, blocked for 15 minutes; then admitted at the rate; abused again, blocked again', async () => {
    expect(seen(await h.canActivate('guarded'))).toEqual([200, undefined, '"abuse";r=1;t=6']);
    expect(seen(await h.canActivate('guarded'))).toEqual([200, undefined, '"abuse";r=0;t=6']);
    expect(seen(await h.canActivate('guarded'))).toEqual([429, '900', '"abuse";r=0;t=900']);
    h.clock.advance(10 * 60_000);
    expect(seen(await h.canActivate('guarded'))).toEqual([429, '300', '"abuse";r=0;t=300']); // not extended by trying
    expect((await h.canActivate('guarded', { ip: '198.51.100.8' })).status).toBe(200); // another caller is not touched
    h.clock.advance(5 * 60_000);
    expect(seen(await h.canActivate('guarded'))).toEqual([200, undefined, '"abuse";r=0;t=6']);
    expect(seen(await h.canActivate('guarded'))).toEqual([429, '900', '"abuse";r=0;t=900']);
  });

  it('a block ends exactly at its time, Retry-After counting down to it', async () => {
    for (let i = 0; i < 3; i++) await h.canActivate('guarded');
    h.clock.advance(15 * 60_000 - 60_000);
    expect(seen(await h.canActivate('guarded'))).toEqual([429, '60', '"abuse";r=0;t=60']);
    h.clock.advance(60_000);
    expect(seen(await h.canActivate('guarded'))).toEqual([200, undefined, '"abuse";r=0;t=6']);
  });

  it('a client retrying once a second through a block is admitted when it ends (a retry in its last second does not start it over)', async () => {
    for (let i = 0; i < 3; i++) await h.canActivate('retried');
    const seen: (string | undefined)[] = [];
    for (let second = 1; second <= 12; second++) {
      h.clock.advance(1_000);
      const outcome = await h.canActivate('retried');
      seen.push(outcome.status === 200 ? 'ok' : outcome.headers['retry-after']);
    }
    expect(seen).toEqual(['9', '8', '7', '6', '5', '4', '3', '2', '1', 'ok', 'ok', 'ok']);
  });
});
