import { describe, expect, it } from 'vitest';
import { renderPairedSet, type PairedSetRow } from './paired-set.js';
import type { PairedSummary } from './paired-summary.js';

const summary = (a: number, b: number, ratio: number): PairedSummary => ({
  a: { median: a, min: a, max: a },
  b: { median: b, min: b, max: b },
  ratio: { median: ratio, q1: ratio - 0.02, q3: ratio + 0.02 },
});

describe('renderPairedSet', () => {
  it('prints each pair with its ratio, and the idle heap as a difference in KB, each against its budget', () => {
    const rows: PairedSetRow[] = [
      {
        scenario: 'streaming',
        engine: 'http',
        summary: summary(3.2, 3.3, 1.031),
        budget: { ratio: 1.05 },
        withinBudget: true,
      },
      {
        scenario: 'non-streaming',
        engine: 'stub',
        summary: summary(100, 120, 1.2),
        budget: { ratio: 1.1 },
        withinBudget: false,
      },
      {
        scenario: 'idle',
        engine: 'stub',
        summary: summary(16_384, 20_480, 1.25),
        budget: { bytes: 6 * 1024 },
        withinBudget: true,
      },
      {
        scenario: 'idle',
        engine: 'http',
        summary: summary(20_480, 20_275, 0.99),
        budget: { bytes: 6 * 1024 },
        withinBudget: true,
      },
    ];
    const text = renderPairedSet(rows, '/tmp/before', '/work/after');
    expect(text).toContain('A (before): /tmp/before');
    expect(text).toMatch(
      /CPU µs per streamed chunk\s+http\s+3\.20\s+3\.30\s+1\.031\s+1\.011–1\.051\s+within \(1\.05\)/,
    );
    expect(text).toMatch(/CPU µs per non-streaming request\s+stub\s+100\.00\s+120\.00\s+1\.200\s+.*over \(1\.10\)/);
    expect(text).toMatch(/heap KB per idle stream\s+stub\s+16\.0\s+20\.0\s+\+4\.0 KB\s+.*within \(\+6 KB\)/);
    expect(text).toMatch(/heap KB per idle stream\s+http\s+20\.0\s+19\.8\s+-0\.2 KB/);
  });

  it('reads each build against the bare proxy of the same rounds, when it was measured, against its target', () => {
    const floor = { a: { median: 1.6, q1: 1.5, q3: 1.7 }, b: { median: 1.12, q1: 1.1, q3: 1.14 } };
    const rows: PairedSetRow[] = [
      {
        scenario: 'per-token-streaming',
        engine: 'http',
        summary: { ...summary(8, 5.6, 0.7), floor },
        budget: { ratio: 1.05 },
        withinBudget: true,
        floor: 1.15,
      },
      {
        scenario: 'streaming',
        engine: 'http',
        summary: { ...summary(4, 3, 0.75), floor },
        budget: { ratio: 1.05 },
        withinBudget: true,
        floor: 1.1,
      },
    ];
    const text = renderPairedSet(rows, '/tmp/before', '/work/after');
    expect(text).toMatch(
      /CPU µs per chunk, one per write\s+http\s+8\.00\s+5\.60\s+0\.700\s+\S+\s+within \(1\.05\)\s+1\.600 \(1\.50–1\.70\)\s+1\.120 \(1\.10–1\.14\)\s+met \(1\.15\)/,
    );
    expect(text).toMatch(/CPU µs per streamed chunk\s+http.*1\.120 \(1\.10–1\.14\)\s+NOT met \(1\.10\)/);
  });
});
