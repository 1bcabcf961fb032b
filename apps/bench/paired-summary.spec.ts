import { describe, expect, it } from 'vitest';
import { pairedSummary } from './paired-summary.js';

describe('pairedSummary', () => {
  it('divides each round of B by the same round of A, and takes the median and quartiles of those ratios', () => {
    const summary = pairedSummary([10, 20, 40, 10], [11, 22, 40, 15]);
    expect(summary.ratio).toEqual({ median: 1.1, q1: 1, q3: 1.1 });
    expect(summary.a).toEqual({ median: 10, min: 10, max: 40 });
    expect(summary.b).toEqual({ median: 15, min: 11, max: 40 });
  });

  it('is not moved by a drift that hits both sides of a round alike', () => {
    const drift = [1, 3, 0.5, 2, 1.5];
    const summary = pairedSummary(
      drift.map((factor) => 100 * factor),
      drift.map((factor) => 105 * factor),
    );
    expect(summary.ratio.median).toBeCloseTo(1.05, 10);
    expect(summary.ratio.q1).toBeCloseTo(1.05, 10);
  });

  it('refuses sides of different lengths, or none', () => {
    expect(() => pairedSummary([1, 2], [1])).toThrow(/as many rounds/);
    expect(() => pairedSummary([], [])).toThrow(/as many rounds/);
  });
});
