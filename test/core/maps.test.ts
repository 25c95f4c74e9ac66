import { describe, expect, it } from 'vitest';
import { pushTo } from '../../src/core/maps.js';

describe('pushTo', () => {
  it('starts a list for a new key and appends to the list of a known one, in place', () => {
    const map = new Map<string, number[]>();
    pushTo(map, 'a', 1);
    const list = map.get('a');
    pushTo(map, 'a', 2);
    pushTo(map, 'b', 3);
    expect(map).toEqual(
      new Map([
        ['a', [1, 2]],
        ['b', [3]],
      ]),
    );
    expect(map.get('a')).toBe(list);
  });
});
