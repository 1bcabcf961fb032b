import { describe, expect, it } from 'vitest';
import { nestsDeeperThan } from './strict-json-body-parser.js';

describe('nestsDeeperThan', () => {
  it('measures objects and arrays alike, and ignores scalars', () => {
    expect(nestsDeeperThan('text', 1)).toBe(false);
    expect(nestsDeeperThan({}, 1)).toBe(false);
    expect(nestsDeeperThan({ a: [1, 2] }, 1)).toBe(true);
    expect(nestsDeeperThan({ a: [1, 2] }, 2)).toBe(false);
    expect(nestsDeeperThan({ a: [{ b: {} }] }, 3)).toBe(true);
  });

  it('handles a 100,000-level nesting without recursion', () => {
    const deep = JSON.parse('['.repeat(5_000) + ']'.repeat(5_000));
    expect(nestsDeeperThan(deep, 64)).toBe(true);
    let built: unknown = [];
    for (let level = 0; level < 100_000; level += 1) built = [built];
    expect(nestsDeeperThan(built, 64)).toBe(true);
    expect(nestsDeeperThan(built, 200_000)).toBe(false);
  });
});
