import { describe, expect, it } from 'vitest';
import { percentile, Samples } from './samples.js';

describe('percentile (nearest rank)', () => {
  const values = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];

  it('picks the smallest value with at least p percent at or below it', () => {
    expect(percentile(values, 50)).toBe(5);
    expect(percentile(values, 90)).toBe(9);
    expect(percentile(values, 99)).toBe(10);
    expect(percentile(values, 100)).toBe(10);
    expect(percentile(values, 0)).toBe(1);
    expect(percentile(values, 10)).toBe(1);
    expect(percentile(values, 11)).toBe(2);
  });

  it('is undefined without values, and the value itself for one', () => {
    expect(percentile([], 50)).toBeUndefined();
    expect(percentile([42], 99)).toBe(42);
  });
});

describe('Samples', () => {
  it('sorts numerically and summarizes', () => {
    const samples = new Samples();
    for (const value of [10, 9, 100, 1, 2]) samples.add(value);
    expect(samples.summary()).toEqual({ count: 5, mean: 24.4, p50: 9, p90: 100, p99: 100, max: 100 });
  });

  it('grows past its first allocation and stops at its capacity, counting what it dropped', () => {
    const samples = new Samples(3000);
    for (let value = 3000; value > 0; value -= 1) samples.add(value);
    samples.add(0);
    expect(samples.count).toBe(3000);
    expect(samples.dropped).toBe(1);
    expect(samples.percentile(100)).toBe(3000);
    expect(samples.percentile(50)).toBe(1500);
  });

  it('re-sorts after new values', () => {
    const samples = new Samples();
    samples.add(5);
    expect(samples.percentile(100)).toBe(5);
    samples.add(7);
    expect(samples.percentile(100)).toBe(7);
  });

  it('has only a count when empty', () => {
    expect(new Samples().summary()).toEqual({ count: 0 });
  });
});
