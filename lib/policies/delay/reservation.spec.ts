import { gcraConsume, gcraRefund } from '../../algorithms/gcra.js';
import type { TokenBucketLimit } from '../../store/rate-limit-store.interface.js';
import { realDecision, reservingBucket, waitMs } from './reservation.js';

const bucket: TokenBucketLimit = { algorithm: 'token-bucket', rate: 10, burst: 1 };

describe('reservations in the bucket (maxDelay, acquire)', () => {
  it('the reserving bucket holds maxDelay of refill more', () => {
    expect(reservingBucket(bucket, 1_000)).toEqual({
      algorithm: 'token-bucket',
      rate: 10,
      burst: 11,
    });
    expect(reservingBucket(bucket, 0)).toBe(bucket);
  });

  it("a burst at one instant: waits 0, 100, ..., maxDelay, then denials; remaining is the real bucket's", () => {
    const reserving = reservingBucket(bucket, 300);
    let tat: number | undefined;
    const seen: [boolean, number, number][] = [];
    for (let i = 0; i < 6; i++) {
      const outcome = gcraConsume(tat, 0, reserving, 1);
      tat = outcome.tat;
      seen.push([
        outcome.decision.allowed,
        waitMs(outcome.decision, reserving, 300),
        realDecision(outcome.decision, reserving, 300).remaining,
      ]);
    }
    expect(seen).toEqual([
      [true, 0, 0],
      [true, 100, 0],
      [true, 200, 0],
      [true, 300, 0],
      [false, 0, 0],
      [false, 0, 0],
    ]);
  });

  it('a request proceeding when its wait ends conforms to the real bucket: a property over random arrivals', () => {
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let run = 0; run < 50; run++) {
      const real: TokenBucketLimit = {
        algorithm: 'token-bucket',
        rate: 1 + random() * 50,
        burst: 1 + Math.floor(random() * 5),
      };
      const maxDelay = Math.floor(random() * 2_000);
      const reserving = reservingBucket(real, maxDelay);
      let tat: number | undefined;
      let realTat: number | undefined;
      let now = 0;
      const starts: number[] = [];
      for (let i = 0; i < 200; i++) {
        now += random() < 0.5 ? 0 : random() * 200;
        const outcome = gcraConsume(tat, now, reserving, 1);
        tat = outcome.tat;
        if (outcome.decision.allowed)
          starts.push(now + waitMs(outcome.decision, reserving, maxDelay));
        const wait = outcome.decision.allowed ? waitMs(outcome.decision, reserving, maxDelay) : -1;
        expect(wait).toBeLessThanOrEqual(maxDelay + 1e-6);
      }
      // Replayed in the order they proceed, the real bucket admits every one of them.
      for (const start of starts.sort((a, b) => a - b)) {
        const outcome = gcraConsume(realTat, start, real, 1);
        expect(outcome.decision.allowed).toBe(true);
        realTat = outcome.tat;
      }
    }
  });

  it('giving a reservation back frees its place for the next caller', () => {
    const reserving = reservingBucket({ algorithm: 'token-bucket', rate: 1, burst: 1 }, 5_000);
    const a = gcraConsume(undefined, 0, reserving, 1);
    const b = gcraConsume(a.tat, 0, reserving, 1);
    expect(waitMs(b.decision, reserving, 5_000)).toBe(1_000);
    const refunded = gcraRefund(b.tat, 0, reserving, 1);
    const c = gcraConsume(refunded, 0, reserving, 1);
    expect(waitMs(c.decision, reserving, 5_000)).toBe(1_000);
  });
});
