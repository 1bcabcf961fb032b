import { describe, expect, it } from 'vitest';
import type { ReplicaReport } from '../../engine/replica-report.js';
import { ReplicaCounterTotals } from './replica-counter-totals.js';

/** A report of replicas by id and requests sent. */
const report = (requests: Record<string, number>): ReplicaReport => ({
  replicas: Object.entries(requests).map(([id, sent]) => ({ id, healthy: true, inFlight: 0, requests: sent })),
  resumeFailures: [{ reason: 'spent', count: 1 }],
});

const totalsOf = () =>
  new ReplicaCounterTotals((of) => [
    ...of.replicas.map((replica) => ({ counter: 'sent', labels: { replica: replica.id }, count: replica.requests })),
    ...(of.resumeFailures ?? []).map(({ reason, count }) => ({ counter: 'failed', labels: { reason }, count })),
  ]);

describe('ReplicaCounterTotals', () => {
  it('adds a closed engine’s final counts to what the open ones report, by model and labels', () => {
    const totals = totalsOf();
    totals.closed('m', report({ a: 3, b: 1 }));
    expect(totals.totals([{ model: 'm', report: report({ a: 2, b: 0 }) }], new Set(['m']))).toEqual([
      { counter: 'sent', model: 'm', labels: { replica: 'a' }, count: 5 },
      { counter: 'sent', model: 'm', labels: { replica: 'b' }, count: 1 },
      { counter: 'failed', model: 'm', labels: { reason: 'spent' }, count: 2 },
    ]);
  });

  it('drops the carried counts of a replica no open engine reports, and of a model no longer served', () => {
    const totals = totalsOf();
    totals.closed('m', report({ a: 3, b: 1 }));
    totals.closed('gone', report({ a: 7 }));
    const rows = totals.totals([{ model: 'm', report: report({ a: 0 }) }], new Set(['m']));
    expect(rows.map(({ model, labels }) => `${model} ${Object.values(labels).join()}`)).toEqual(['m a', 'm spent']);
    // Gone for good: a replica added back later starts again from its engine's count.
    expect(totals.totals([{ model: 'm', report: report({ a: 0, b: 0 }) }], new Set(['m', 'gone']))).toContainEqual({
      counter: 'sent',
      model: 'm',
      labels: { replica: 'b' },
      count: 0,
    });
  });
});
