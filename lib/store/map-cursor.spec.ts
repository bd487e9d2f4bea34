import { MapCursor } from './map-cursor.js';

describe('MapCursor', () => {
  const walk = (cursor: MapCursor<string>, steps: number) =>
    Array.from({ length: steps }, () => cursor.next());

  it('walks the keys in insertion order, ends a pass with undefined, then starts over', () => {
    const map = new Map([
      ['a', 1],
      ['b', 2],
    ]);
    const cursor = new MapCursor(map);
    expect(walk(cursor, 4)).toEqual(['a', 'b', undefined, 'a']);
  });

  it('resumes where it stopped, skipping what was deleted meanwhile', () => {
    const map = new Map([
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ]);
    const cursor = new MapCursor(map);
    expect(cursor.next()).toBe('a');
    map.delete('b');
    map.set('d', 4);
    cursor.inserted();
    expect(walk(cursor, 3)).toEqual(['c', 'd', undefined]);
  });

  it('lets go of its place after as many insertions as the map holds, and starts over from the oldest entry', () => {
    const map = new Map([
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ]);
    const cursor = new MapCursor(map);
    expect(cursor.next()).toBe('a');
    // Charges move keys to the end (delete + set), as the stores do.
    for (const key of ['a', 'b', 'a']) {
      map.delete(key);
      map.set(key, 0);
      cursor.inserted();
    }
    // Three insertions, three entries: still resumes.
    expect(cursor.next()).toBe('c');
    for (const key of ['c', 'b', 'a', 'c']) {
      map.delete(key);
      map.set(key, 0);
      cursor.inserted();
    }
    // Four insertions while idle, over a map of three: a new pass, oldest first.
    expect(walk(cursor, 4)).toEqual(['b', 'a', 'c', undefined]);
  });
});
