/**
 * The values of a counter labelled `{model, replica}` for one model, by replica, read from a
 * Prometheus text exposition (a gateway's `/metrics`).
 */
export function countersByReplica(exposition: string, metric: string, model: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(`${metric}{`)) continue;
    const match = /^[^{]+\{(.*)\} (\S+)$/.exec(line);
    if (!match) continue;
    const labels = Object.fromEntries(
      [...match[1].matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((pair) => [pair[1], pair[2]]),
    );
    if (labels.model !== model || labels.replica === undefined) continue;
    values.set(labels.replica, Number(match[2]));
  }
  return values;
}

/** `after - before` for every replica of `after` (a replica absent before counts from 0). */
export function counterDeltas(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  return new Map([...after].map(([replica, value]) => [replica, value - (before.get(replica) ?? 0)]));
}

/** The largest replica's share of the requests over the mean share: 1 is perfectly even. */
export function maxOverMean(counts: readonly number[]): number | undefined {
  const total = counts.reduce((sum, count) => sum + count, 0);
  if (counts.length === 0 || total === 0) return undefined;
  return Math.max(...counts) / (total / counts.length);
}
