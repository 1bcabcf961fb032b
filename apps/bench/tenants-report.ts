import type { TenantLatency, TenantsResults } from './tenants-scenario.js';
import { renderTable, type Cell } from './text-table.js';

const ms = (value: number | undefined): Cell => (value === undefined ? undefined : Number(value.toFixed(1)));
const micros = (value: number | undefined): Cell => (value === undefined ? undefined : Number(value.toFixed(2)));

/** Mean latency ratios of one run: the quiet tenant against itself alone and against the noisy tenant, per order. */
export function tenantRatios(
  results: TenantsResults,
): Array<{ order: string; quietVsAlone?: number; quietVsNoisy?: number }> {
  const ratio = (value?: number, baseline?: number) =>
    value === undefined || baseline === undefined || baseline === 0 ? undefined : value / baseline;
  return results.rows.map((row) => ({
    order: row.order,
    quietVsAlone: ratio(row.quiet.latency.mean, results.unloaded.latency.mean),
    quietVsNoisy: ratio(row.quiet.latency.mean, row.noisy.latency.mean),
  }));
}

/** The scenario's section of the printed report: its title and body. */
export function renderTenants(results: TenantsResults): { title: string; body: string } {
  const { plan } = results;
  const latencyCells = (latency: Pick<TenantLatency, 'firstToken' | 'latency'>) => [
    ms(latency.firstToken.mean),
    ms(latency.firstToken.p99),
    ms(latency.latency.mean),
    ms(latency.latency.p99),
  ];
  const rows: Cell[][] = [
    ['-', 'quiet alone', results.unloaded.latency.count, ...latencyCells(results.unloaded), undefined],
  ];
  for (const row of results.rows) {
    for (const tenant of ['quiet', 'noisy'] as const) {
      const latency = row[tenant];
      rows.push([row.order, tenant, latency.requests, ...latencyCells(latency), ms(latency.gatewayQueueMs)]);
    }
  }
  const times = (value?: number) => (value === undefined ? '-' : `${value.toFixed(2)}x`);
  const ratios = tenantRatios(results)
    .map(
      ({ order, quietVsAlone, quietVsNoisy }) =>
        `${order}: quiet mean latency ${times(quietVsAlone)} alone, ${times(quietVsNoisy)} the noisy tenant's`,
    )
    .join('; ');
  const scheduler = results.scheduler.map((cost) => [
    cost.order,
    cost.waiting,
    cost.tenants,
    micros(cost.microsPerRequest),
    ms(cost.comparisonsPerRequest),
  ]);
  return {
    title:
      `Tenants: ${plan.noisyStreams} noisy streams beside one quiet client (one request at a time, ${plan.quietThinkMs} ms apart) on a one-slot model ` +
      `(stub, ${plan.tokens} tokens ${plan.tokenIntervalMs} ms apart), FIFO then fair; ms from sending (first token, end); gateway queue: its own mean queue wait`,
    body: [
      renderTable(
        [
          'order',
          'tenant',
          'requests',
          'first token mean',
          'first token p99',
          'latency mean',
          'latency p99',
          'gateway queue',
        ],
        rows,
      ),
      ratios,
      '',
      'The scheduler alone (one in, one out and settled per request, no HTTP):',
      renderTable(['order', 'waiting', 'tenants', 'CPU µs/request', 'comparisons/request'], scheduler),
    ].join('\n'),
  };
}
