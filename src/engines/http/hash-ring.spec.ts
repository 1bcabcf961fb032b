import { describe, expect, it } from 'vitest';
import { HashRing, ringPosition } from './hash-ring.js';

const ringOf = (names: string[]) => new HashRing(names.map((name) => ({ id: `http://${name}:8000/v1`, member: name })));
const KEYS = Array.from({ length: 20_000 }, (_, index) => ringPosition(`conversation ${index}`));
const ownersOf = (ring: HashRing<string>) => KEYS.map((key) => ring.ownerOf(key)!);
const sharesOf = (owners: string[], names: string[]) =>
  names.map((name) => owners.filter((owner) => owner === name).length / owners.length);

describe('HashRing', () => {
  it('spreads keys evenly: every member within 10% of an equal share', () => {
    for (const names of [
      ['a', 'b', 'c', 'd'],
      ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'],
    ]) {
      const shares = sharesOf(ownersOf(ringOf(names)), names);
      for (const share of shares) {
        expect(share * names.length).toBeGreaterThan(0.9);
        expect(share * names.length).toBeLessThan(1.1);
      }
    }
  });

  it('moves only the keys of a member that joins: about 1/n of them, all to it', () => {
    const before = ownersOf(ringOf(['a', 'b', 'c', 'd']));
    const after = ownersOf(ringOf(['a', 'b', 'c', 'd', 'e']));
    const moved = KEYS.flatMap((_, index) => (before[index] === after[index] ? [] : [after[index]]));
    expect(new Set(moved)).toEqual(new Set(['e']));
    expect(moved.length / KEYS.length).toBeGreaterThan(0.15);
    expect(moved.length / KEYS.length).toBeLessThan(0.25);
  });

  it('moves only the keys of a member that leaves, spread over the others', () => {
    const before = ownersOf(ringOf(['a', 'b', 'c', 'd']));
    const after = ownersOf(ringOf(['a', 'b', 'c']));
    const moved = KEYS.flatMap((_, index) => (before[index] === after[index] ? [] : [index]));
    expect(moved.every((index) => before[index] === 'd')).toBe(true);
    expect(moved.length).toBe(before.filter((owner) => owner === 'd').length);
    const heirs = sharesOf(
      moved.map((index) => after[index]),
      ['a', 'b', 'c'],
    );
    for (const share of heirs) expect(share).toBeGreaterThan(0.2);
  });

  it('is the same ring in every process: built from ids alone, whatever their order', () => {
    expect(ownersOf(ringOf(['d', 'b', 'a', 'c']))).toEqual(ownersOf(ringOf(['a', 'b', 'c', 'd'])));
  });

  it('walks each member once, in ring order, until one is accepted', () => {
    const ring = ringOf(['a', 'b', 'c', 'd']);
    const key = KEYS[0];
    const order: string[] = [];
    expect(ring.walk(key, (member) => (order.push(member), false))).toBeUndefined();
    expect([...order].sort()).toEqual(['a', 'b', 'c', 'd']);
    expect(order[0]).toBe(ring.ownerOf(key));
    expect(ring.walk(key, (member) => member === order[2])).toBe(order[2]);
    // The order after a member is skipped is the order the ring without it would give.
    const without = ringOf(['a', 'b', 'c', 'd'].filter((name) => name !== order[0]));
    expect(without.ownerOf(key)).toBe(order[1]);
  });

  it('an empty ring owns nothing', () => {
    expect(ringOf([]).ownerOf(123)).toBeUndefined();
  });
});
