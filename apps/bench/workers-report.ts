import { failuresOf, micros, ms } from './report-cells.js';
import { renderTable, type Cell } from './text-table.js';
import type { WorkersResults } from './workers-scenario.js';
import type { RequestCostRow } from './workers-rows.js';

/** The workers scenario's tables: streaming, admission, stored responses, admissions alone. */
export function renderWorkers(workers: WorkersResults): Array<{ title: string; body: string }> {
  return [streamingTable(workers), admissionTable(workers), storedTable(workers), roundTripTable(workers)];
}

function streamingTable({ plan, streaming }: WorkersResults) {
  const rows = streaming.map((row) => [
    row.load,
    row.workers,
    row.streams,
    row.chunksPerSecond,
    micros(row.gatewayMicrosPerChunk),
    row.perWorkerMicrosPerChunk.map((value) => micros(value)).join(' / '),
    row.perWorkerShare.map((share) => `${(share * 100).toFixed(0)}%`).join(' / '),
    micros(row.primaryMicrosPerChunk),
    `${(row.gatewayCores * 100).toFixed(0)}%`,
    `${(row.backgroundCores * 100).toFixed(0)}%`,
    failuresOf(row.failures),
  ]);
  return {
    title:
      `Workers: streaming through the HTTP engine (saturated: ${plan.saturated.tokens} tokens per stream, no delay; ` +
      `paced: ${plan.paced.streamsPerWorker} streams per worker of ${plan.paced.tokens} tokens, 10 ms apart; CPU in µs per chunk: all gateway processes, each worker, the primary)`,
    body: renderTable(
      [
        'load',
        'workers',
        'streams',
        'chunks/s',
        'gw CPU µs/chunk',
        'per worker µs/chunk',
        'chunks per worker',
        'primary µs/chunk',
        'gw CPU',
        'others',
        'errors',
      ],
      rows,
    ),
  };
}

const COST_HEADERS = [
  'requests/s',
  'latency mean',
  'gw CPU µs/request',
  'primary µs/request',
  'added µs/request',
  'added ms',
  'errors',
];

const added = (value: number | undefined, baseline: number | undefined) =>
  value === undefined || baseline === undefined ? undefined : value - baseline;

/** Requests/s, latency, CPU, and what the row adds to its baseline (none for a baseline itself). */
function costCells(row: RequestCostRow, baseline: RequestCostRow | undefined): Cell[] {
  return [
    row.requestsPerSecond,
    ms(row.latency.mean),
    micros(row.gatewayMicrosPerRequest),
    micros(row.primaryMicrosPerRequest),
    baseline && baseline !== row
      ? micros(added(row.gatewayMicrosPerRequest, baseline.gatewayMicrosPerRequest))
      : undefined,
    baseline && baseline !== row ? ms(added(row.latency.mean, baseline.latency.mean)) : undefined,
    failuresOf(row.failures),
  ];
}

function admissionTable({ plan, admission }: WorkersResults) {
  const free = (concurrency: number) =>
    admission.find((row) => row.concurrency === concurrency && row.admission === 'free');
  const rows = admission.map((row) => [row.concurrency, row.admission, ...costCells(row, free(row.concurrency))]);
  return {
    title:
      `Workers: admission with ${admission[0]?.workers} workers (non-streaming, ${plan.admission.tokens}-token answers from the stub; free: no maxConcurrency, ` +
      'decided in the worker; coordinated: maxConcurrency set, reserved and released through the primary; latency in ms)',
    body: renderTable(['concurrent', 'admission', ...COST_HEADERS], rows),
  };
}

function storedTable({ plan, stored }: WorkersResults) {
  const storeOff = (workers: number) => stored.find((row) => row.workers === workers && row.store === 'off');
  const rows = stored.map((row) => [row.workers, row.store, ...costCells(row, storeOff(row.workers))]);
  return {
    title:
      `Workers: stored responses (${plan.stored.concurrency} streamed Responses requests of ${plan.stored.tokens} tokens from the stub; store: false or true, ` +
      'kept by the memory store in the process, or in the primary with workers; latency in ms)',
    body: renderTable(['workers', 'store', ...COST_HEADERS], rows),
  };
}

function roundTripTable({ roundTrips }: WorkersResults) {
  const rows = roundTrips.map((row) => [
    row.inFlight,
    row.admissions,
    micros(row.roundTripMicros),
    micros(row.wallMicrosPerAdmission),
    micros(row.workerMicrosPerAdmission),
    micros(row.primaryMicrosPerAdmission),
  ]);
  return {
    title:
      'Workers: admissions alone (reserve, answer, release over the IPC channel of a forked worker; no HTTP; µs per admission)',
    body: renderTable(['in flight', 'admissions', 'round trip', 'wall', 'worker CPU', 'primary CPU'], rows),
  };
}
