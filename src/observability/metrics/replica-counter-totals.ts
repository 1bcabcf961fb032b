import type { ReplicaReport } from '../../engine/replica-report.js';

/** One labelled count of a replica report, for the counter it names (`model` apart). */
export interface CounterRow {
  counter: string;
  labels: Readonly<Record<string, string>>;
  count: number;
}

/** A counter row of one model. */
export type ModelCounterRow = CounterRow & { model: string };

/** What an engine not yet closed reports now (none: it has no replicas to show), by its model's name. */
export interface OpenEngineReport {
  model: string;
  report: ReplicaReport | undefined;
}

/**
 * The replica counters of `/metrics` as totals that outlive engines. An engine reports counts
 * since it was built; a reload replaces it, and the one replaced finishes its requests, then
 * closes. So a total is what every open engine of the model reports now, plus the final counts of
 * its engines that closed (`closed`, told by the model registry). A model no longer served, or a
 * replica no open engine of its model reports, drops its carried counts: its series leave.
 */
export class ReplicaCounterTotals {
  /** The final counts of closed engines, by counter, model and labels. */
  private readonly carried = new Map<string, ModelCounterRow>();

  constructor(private readonly countsOf: (report: ReplicaReport) => CounterRow[]) {}

  /** Keeps the final counts of an engine of `model` that closed. */
  closed(model: string, report: ReplicaReport | undefined): void {
    if (report) for (const row of this.countsOf(report)) add(this.carried, { ...row, model });
  }

  /** Every counter row of the models in `served`, summed over `open` engines and the closed ones before them. */
  totals(open: readonly OpenEngineReport[], served: ReadonlySet<string>): ModelCounterRow[] {
    const rows = new Map<string, ModelCounterRow>();
    const replicas = new Set<string>();
    for (const { model, report } of open) {
      if (!report || !served.has(model)) continue;
      for (const replica of report.replicas) replicas.add(JSON.stringify([model, replica.id]));
      for (const row of this.countsOf(report)) add(rows, { ...row, model });
    }
    for (const [key, row] of this.carried) {
      const replica = row.labels.replica;
      if (!served.has(row.model) || (replica !== undefined && !replicas.has(JSON.stringify([row.model, replica]))))
        this.carried.delete(key);
      else add(rows, row);
    }
    return [...rows.values()];
  }
}

/** A row's identity: its counter, model and labels (in any order). */
function keyOf(row: ModelCounterRow): string {
  return JSON.stringify([row.counter, row.model, Object.entries(row.labels).sort(([a], [b]) => (a < b ? -1 : 1))]);
}

function add(rows: Map<string, ModelCounterRow>, row: ModelCounterRow): void {
  const key = keyOf(row);
  const existing = rows.get(key);
  if (existing) existing.count += row.count;
  else rows.set(key, { ...row });
}
