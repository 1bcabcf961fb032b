import { runPaired, type PairedResult, type PairedScenario } from './paired-run.js';
import { renderTable } from './text-table.js';

/** `npm run bench -- --ab DIR`: how long each pair runs. */
export interface PairedSetProfile {
  rounds: number;
  windowMs: number;
  idleRounds: number;
  idleStreams: number;
}

export const FULL_PAIRED_SET: PairedSetProfile = { rounds: 20, windowMs: 2000, idleRounds: 3, idleStreams: 1000 };
export const QUICK_PAIRED_SET: PairedSetProfile = { rounds: 6, windowMs: 500, idleRounds: 2, idleStreams: 300 };

/** A pair's limit: B / A at most `ratio`, or B at most `bytes` above A. */
export type PairBudget = { ratio: number } | { bytes: number };

/**
 * The budget a change of the gateway's structure is held to (docs/benchmarks.md): B / A per
 * streamed chunk within 5%, per non-streaming request within 10%; per idle stream, 2 KB of heap
 * plus the 4 KB a keepalive made of operators may spend. Through the HTTP engine the bare proxy
 * is measured in the same rounds, and each build is read against it too (`floor`: the most B may
 * spend, as a multiple of the bare proxy's CPU).
 */
const PAIRS: ReadonlyArray<{ scenario: PairedScenario; engine: 'stub' | 'http'; budget: PairBudget; floor?: number }> =
  [
    { scenario: 'streaming', engine: 'stub', budget: { ratio: 1.05 } },
    { scenario: 'streaming', engine: 'http', budget: { ratio: 1.05 }, floor: 1.3 },
    { scenario: 'per-token-streaming', engine: 'http', budget: { ratio: 1.05 }, floor: 1.15 },
    { scenario: 'paced-streaming', engine: 'stub', budget: { ratio: 1.05 } },
    { scenario: 'paced-streaming', engine: 'http', budget: { ratio: 1.05 } },
    { scenario: 'non-streaming', engine: 'stub', budget: { ratio: 1.1 } },
    { scenario: 'non-streaming', engine: 'http', budget: { ratio: 1.1 }, floor: 1.5 },
    { scenario: 'idle', engine: 'stub', budget: { bytes: 6 * 1024 } },
    { scenario: 'idle', engine: 'http', budget: { bytes: 6 * 1024 } },
  ];

const MEASURES: Record<PairedScenario, string> = {
  streaming: 'CPU µs per streamed chunk',
  'per-token-streaming': 'CPU µs per chunk, one per write',
  'paced-streaming': 'CPU µs per paced chunk',
  'non-streaming': 'CPU µs per non-streaming request',
  idle: 'heap KB per idle stream',
};

export interface PairedSetRow {
  scenario: PairedScenario;
  engine: 'stub' | 'http';
  summary: PairedResult;
  budget: PairBudget;
  withinBudget: boolean;
  /** B / bare proxy at most this (when the floor was measured). */
  floor?: number;
}

/** Every pair, one after the other, A (`before`) against B (`after`): both must be built. */
export async function runPairedSet(
  before: string,
  after: string,
  profile: PairedSetProfile,
  log: (line: string) => void,
): Promise<PairedSetRow[]> {
  const rows: PairedSetRow[] = [];
  for (const { scenario, engine, budget, floor } of PAIRS) {
    log(`A/B ${scenario}, ${engine} engine`);
    const idle = scenario === 'idle';
    const summary = await runPaired({
      a: before,
      b: after,
      scenario,
      engine,
      rounds: idle ? profile.idleRounds : profile.rounds,
      windowMs: profile.windowMs,
      concurrency: 64,
      idleStreams: profile.idleStreams,
      nodeFlags: [],
      floor: floor !== undefined,
    });
    const withinBudget =
      'ratio' in budget ? summary.ratio.median <= budget.ratio : summary.b.median - summary.a.median <= budget.bytes;
    rows.push({ scenario, engine, summary, budget, withinBudget, ...(floor !== undefined ? { floor } : {}) });
  }
  return rows;
}

export function renderPairedSet(rows: readonly PairedSetRow[], before: string, after: string): string {
  const kb = (bytes: number) => (bytes / 1024).toFixed(1);
  const table = renderTable(
    [
      'measure',
      'engine',
      'A median',
      'B median',
      'B / A (median)',
      'quartiles',
      'budget',
      'A / bare',
      'B / bare',
      'B / bare target',
    ],
    rows.map(({ scenario, engine, summary, budget, withinBudget, floor }) => {
      const verdict = withinBudget ? 'within' : 'over';
      if (!('ratio' in budget)) {
        const delta = summary.b.median - summary.a.median;
        return [
          MEASURES[scenario],
          engine,
          kb(summary.a.median),
          kb(summary.b.median),
          `${delta < 0 ? '-' : '+'}${kb(Math.abs(delta))} KB`,
          '',
          `${verdict} (+${Number(kb(budget.bytes))} KB)`,
        ];
      }
      const measure = MEASURES[scenario];
      const limit = budget.ratio.toFixed(2);
      const bare = summary.floor;
      const ofBare = (ratio: PairedResult['ratio'] | undefined) =>
        ratio === undefined ? undefined : `${ratio.median.toFixed(3)} (${ratio.q1.toFixed(2)}–${ratio.q3.toFixed(2)})`;
      const floorVerdict =
        floor === undefined || bare === undefined
          ? undefined
          : `${bare.b.median <= floor ? 'met' : 'NOT met'} (${floor.toFixed(2)})`;
      return [
        measure,
        engine,
        summary.a.median.toFixed(2),
        summary.b.median.toFixed(2),
        summary.ratio.median.toFixed(3),
        `${summary.ratio.q1.toFixed(3)}–${summary.ratio.q3.toFixed(3)}`,
        `${verdict} (${limit})`,
        ofBare(bare?.a),
        ofBare(bare?.b),
        floorVerdict,
      ];
    }),
  );
  const caveat =
    "A / bare, B / bare: each build's CPU over the bare proxy's (Fastify + undici forwarding, nothing else) in the same round, median (quartiles).\n" +
    "A median of paired rounds still moves by several percent from run to run on a shared machine: run `--ab` on the\nbuild itself (an A/A) for this machine's error, and read the verdicts against it (docs/benchmarks.md).";
  return `Paired A/B, taking turns window by window\nA (before): ${before}\nB (after):  ${after}\n\n${table}\n\n${caveat}`;
}
