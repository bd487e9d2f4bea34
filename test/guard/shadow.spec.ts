/**
 * `shadow` (per limit and module-wide), through the guard: a shadow limit is
 * decided and charged but never denies and is not in the headers; its
 * would-be denials are published as 'shadow-denied' and said once per burst.
 * End to end: test/shadow/.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Controller, Get } from '@nestjs/common';
import { RateLimit } from 'nestjs-holdup';
import { createGuardHarness, flushPromises, type GuardHarness } from '../utils/guard-harness.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';

@Controller('shadow')
class ShadowController {
  @RateLimit({ name: 'candidate', rate: '1/min', burst: 2, shadow: true })
  @Get('only')
  only() {}

  @RateLimit([
    { name: 'current', rate: '1/min', burst: 3 },
    { name: 'stricter', rate: '1/min', burst: 1, shadow: true },
  ])
  @Get('beside')
  beside() {}

  @RateLimit({ name: 'enforced', rate: '1/min', burst: 1, shadow: false })
  @Get('enforced')
  enforced() {}
}

interface Seen {
  readonly result: string;
  readonly limits: readonly string[];
}

describe('guard: shadow', () => {
  const logs = silenceRateLimitLogs();
  let h: GuardHarness | undefined;
  let seen: Seen[];
  const listener = (event: unknown) =>
    seen.push({ result: (event as Seen).result, limits: (event as Seen).limits });
  beforeEach(() => {
    seen = [];
    subscribe('nestjs-holdup:decision', listener);
  });
  afterEach(async () => {
    unsubscribe('nestjs-holdup:decision', listener);
    await h?.close();
    h = undefined;
  });
  const shadowDenials = async () => {
    await flushPromises();
    return seen.filter(({ result }) => result === 'shadow-denied');
  };
  const shadowWarnings = () =>
    logs.messages('warn').filter((message) => message.includes('(shadow)'));

  it('never denies, is not in the headers; its would-be denials are published and said once per burst', async () => {
    h = await createGuardHarness(ShadowController);
    for (let i = 0; i < 5; i++)
      expect(await h.canActivate('only')).toMatchObject({
        allowed: true,
        status: 200,
        headers: {},
      });
    expect(await shadowDenials()).toEqual(
      [1, 2, 3].map(() => ({ result: 'shadow-denied', limits: ['candidate'] })),
    );
    expect(shadowWarnings()).toEqual([
      expect.stringContaining('limit "candidate" (shadow): would have denied a request; admitted.'),
    ]);
    await h.close();
    h = undefined;
    expect(shadowWarnings()).toEqual([
      expect.stringContaining('would have denied a request'),
      expect.stringContaining(
        'limit "candidate" (shadow): 3 request(s) would have been denied in the last burst.',
      ),
    ]);
  });

  it('beside an enforced limit: the enforced one decides and alone is in the headers; the shadow one is charged only for admitted requests', async () => {
    h = await createGuardHarness(ShadowController);
    for (const r of [2, 1, 0]) {
      const admitted = await h.canActivate('beside');
      expect([
        admitted.status,
        admitted.headers['ratelimit'],
        admitted.headers['ratelimit-policy'],
      ]).toEqual([200, `"current";r=${r};t=60`, '"current";q=3;w=180']);
    }
    const denied = await h.canActivate('beside');
    expect([denied.status, denied.headers['ratelimit'], denied.headers['retry-after']]).toEqual([
      429,
      '"current";r=0;t=60',
      '60',
    ]);
    // 1 admitted by "stricter", 2 would-be denials; the request "current" denied never reached it.
    expect(await shadowDenials()).toEqual([
      { result: 'shadow-denied', limits: ['stricter'] },
      { result: 'shadow-denied', limits: ['stricter'] },
    ]);
  });

  it('module-wide shadow: every limit shadows, except one that says shadow: false', async () => {
    h = await createGuardHarness(ShadowController, { shadow: true });
    for (let i = 0; i < 4; i++) expect((await h.canActivate('beside')).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await h.canActivate('only')).status).toBe(200);
    expect((await h.canActivate('enforced')).status).toBe(200);
    expect((await h.canActivate('enforced')).status).toBe(429);
  });
});
