import { percentile } from './samples.js';

export interface FigureSummary {
  median: number;
  min: number;
  max: number;
}

export interface PairedSummary {
  a: FigureSummary;
  b: FigureSummary;
  /** B / A of each round, its median and quartiles. */
  ratio: { median: number; q1: number; q3: number };
}

/** A paired A/B's figures (round by round, the same number on each side) summed up. */
export function pairedSummary(a: readonly number[], b: readonly number[]): PairedSummary {
  return { a: summaryOf(a), b: summaryOf(b), ratio: ratioSummary(b, a) };
}

/** `value` / `reference` round by round: the median and quartiles of those ratios. */
export function ratioSummary(value: readonly number[], reference: readonly number[]): PairedSummary['ratio'] {
  if (reference.length === 0 || reference.length !== value.length) {
    throw new Error(`paired figures need as many rounds on each side (got ${reference.length} and ${value.length})`);
  }
  const ratios = reference.map((base, round) => value[round] / base).sort((x, y) => x - y);
  return { median: percentile(ratios, 50)!, q1: percentile(ratios, 25)!, q3: percentile(ratios, 75)! };
}

function summaryOf(values: readonly number[]): FigureSummary {
  const sorted = [...values].sort((x, y) => x - y);
  return { median: percentile(sorted, 50)!, min: sorted[0], max: sorted[sorted.length - 1] };
}
