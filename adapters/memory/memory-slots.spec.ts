import { MemoryStore } from './memory.store.js';
import { MemorySlots } from './memory-slots.js';

const acquire = (
  slots: MemorySlots,
  id: string,
  now: number,
  key = 'k',
  limit = 2,
  leaseMs = 1_000,
) => slots.acquire({ key, limit, id, leaseMs, now });

describe('MemorySlots', () => {
  it('admits up to the limit per key, and frees a slot on release', () => {
    const slots = new MemorySlots(100);
    expect(acquire(slots, 'a', 0)).toEqual({ allowed: true, inFlight: 1 });
    expect(acquire(slots, 'b', 0)).toEqual({ allowed: true, inFlight: 2 });
    expect(acquire(slots, 'c', 0)).toEqual({ allowed: false, inFlight: 2 });
    expect(acquire(slots, 'x', 0, 'other')).toEqual({ allowed: true, inFlight: 1 });
    slots.release({ key: 'k', id: 'a', now: 1 });
    expect(slots.inFlight('k', 1)).toBe(1);
    expect(acquire(slots, 'c', 1)).toEqual({ allowed: true, inFlight: 2 });
  });

  it('a release is idempotent and a key with no slot left is gone', () => {
    const slots = new MemorySlots(100);
    acquire(slots, 'a', 0);
    slots.release({ key: 'k', id: 'a', now: 0 });
    slots.release({ key: 'k', id: 'a', now: 0 });
    slots.release({ key: 'nope', id: 'a', now: 0 });
    expect(slots.size).toBe(0);
    expect(slots.inFlight('k', 0)).toBe(0);
  });

  it('a slot never released comes back when its lease runs out', () => {
    const slots = new MemorySlots(100);
    acquire(slots, 'a', 0);
    acquire(slots, 'b', 500);
    expect(acquire(slots, 'c', 999).allowed).toBe(false);
    // a's lease ran out at 1000, b's runs until 1500.
    expect(acquire(slots, 'c', 1_000)).toEqual({ allowed: true, inFlight: 2 });
    expect(slots.inFlight('k', 1_500)).toBe(1);
  });

  it('leaked slots of keys never asked again are swept by later acquisitions', () => {
    const slots = new MemorySlots(10_000);
    for (let i = 0; i < 1_000; i++) acquire(slots, `leak-${i}`, 0, `key-${i}`);
    expect(slots.size).toBe(1_000);
    for (let i = 0; i < 1_000; i++) {
      slots.release({ key: 'fresh', id: String(i), now: 5_000 });
      acquire(slots, String(i), 5_000, 'fresh', 1);
    }
    expect(slots.size).toBe(1);
  });

  it('bounded: past maxSlots held slots, an acquisition fails like a store', () => {
    const slots = new MemorySlots(3);
    for (let i = 0; i < 3; i++) acquire(slots, `s${i}`, 0, `key-${i}`);
    expect(() => acquire(slots, 's4', 0, 'key-4')).toThrow(
      'MemoryStore: 3 concurrency slots are held, the most this store keeps (maxKeys)',
    );
    slots.release({ key: 'key-0', id: 's0', now: 0 });
    expect(acquire(slots, 's4', 0, 'key-4').allowed).toBe(true);
  });

  it("is MemoryStore's, bounded by its maxKeys, and cleared when it closes", () => {
    const store = new MemoryStore({ maxKeys: 2 });
    store.slots.acquire({ key: 'a', limit: 5, id: '1', leaseMs: 1_000, now: 0 });
    store.slots.acquire({ key: 'a', limit: 5, id: '2', leaseMs: 1_000, now: 0 });
    expect(() =>
      store.slots.acquire({ key: 'a', limit: 5, id: '3', leaseMs: 1_000, now: 0 }),
    ).toThrow(/maxKeys/);
    store.close();
    expect(store.slots.size).toBe(0);
  });
});
