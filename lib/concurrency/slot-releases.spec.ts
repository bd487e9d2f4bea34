import type { ConcurrencySlots, SlotReleaseRequest } from '../store/concurrency-slots.interface.js';
import { FIRST_RETRY_MS, SlotReleases } from './slot-releases.js';

/** Slots whose releases fail (reject) while `down`; what reached them, in order. */
class FlakySlots implements ConcurrencySlots {
  down = true;
  readonly tried: string[] = [];
  readonly landed: string[] = [];
  acquire() {
    return { allowed: true, inFlight: 1 };
  }
  release(request: SlotReleaseRequest): Promise<void> {
    this.tried.push(request.id);
    if (this.down) return Promise.reject(new Error('no answer'));
    this.landed.push(request.id);
    return Promise.resolve();
  }
}

const until = async (condition: () => boolean, timeoutMs = 5_000) => {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

describe('SlotReleases', () => {
  let failed: unknown[];
  let dropped: [number, string][];
  let releases: SlotReleases;
  beforeEach(() => {
    failed = [];
    dropped = [];
    releases = new SlotReleases(() => 0, {
      failed: (error) => failed.push(error),
      dropped: (count, why) => dropped.push([count, why]),
    });
  });
  afterEach(() => releases.close());

  it('retries failed releases until they land, one probe at a time while the store is down', async () => {
    const slots = new FlakySlots();
    for (const id of ['a', 'b', 'c']) releases.release(slots, 'k', id, 60_000);
    await until(() => releases.size === 3);
    expect(failed).toHaveLength(3);
    // Down: each pass tries only the first of them.
    await until(() => slots.tried.length >= 6);
    expect(slots.tried.slice(3).every((id) => id === 'a')).toBe(true);
    slots.down = false;
    await until(() => slots.landed.length === 3);
    expect(slots.landed).toEqual(['a', 'b', 'c']);
    expect(releases.size).toBe(0);
    expect(failed).toHaveLength(3); // retries are not said again
  });

  it('drops a release once its lease has run out since it was first tried', async () => {
    const slots = new FlakySlots();
    releases.release(slots, 'k', 'a', FIRST_RETRY_MS / 2);
    await until(() => dropped.length > 0);
    expect(dropped).toEqual([[1, 'lease']]);
    expect(releases.size).toBe(0);
  });

  it('close() drops what is pending and retries nothing more (no timer left)', async () => {
    const slots = new FlakySlots();
    releases.release(slots, 'k', 'a', 60_000);
    await until(() => releases.size === 1);
    releases.close();
    expect(dropped).toEqual([[1, 'shutdown']]);
    const tried = slots.tried.length;
    await new Promise((resolve) => setTimeout(resolve, FIRST_RETRY_MS * 3));
    expect(slots.tried).toHaveLength(tried);
  });

  it('a release that throws synchronously is contained and retried', async () => {
    let calls = 0;
    const slots: ConcurrencySlots = {
      acquire: () => ({ allowed: true, inFlight: 1 }),
      release: () => {
        if (++calls === 1) throw new Error('boom');
      },
    };
    releases.release(slots, 'k', 'a', 60_000);
    expect(failed).toHaveLength(1);
    await until(() => calls === 2);
    await until(() => releases.size === 0);
  });
});
