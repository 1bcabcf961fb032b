import type { ProcessGroup } from './gateway-processes.js';
import { Samples, type SampleSummary } from './samples.js';
import type { WindowTally } from './workers-round.js';

/** Streaming through the HTTP engine with one gateway of `workers` processes. */
export interface WorkersStreamingRow {
  /** `side by side`: as many one-process gateways as the most workers, paced together (the control). */
  load: 'saturated' | 'paced' | 'side by side';
  workers: number;
  streams: number;
  chunksPerSecond: number;
  /** CPU of every gateway process (the primary and its workers) per chunk, µs. */
  gatewayMicrosPerChunk?: number;
  /** Each worker's CPU per chunk it streamed, µs (the one process's, with one). */
  perWorkerMicrosPerChunk: number[];
  /** Each worker's share of the chunks. */
  perWorkerShare: number[];
  /** The primary's CPU per chunk, µs (none with one process). */
  primaryMicrosPerChunk?: number;
  /** All gateway processes' CPU over the window, in cores. */
  gatewayCores: number;
  /** CPU of processes outside the benchmark during the windows, in cores. */
  backgroundCores: number;
  failures: Record<string, number>;
}

/** What requests of one kind cost a gateway of one or more processes, measured together. */
export interface RequestCostRow {
  workers: number;
  concurrency: number;
  requestsPerSecond: number;
  /** From sending a request to its whole answer (the end of its stream), ms. */
  latency: SampleSummary;
  /** CPU of every gateway process per request, µs. */
  gatewayMicrosPerRequest?: number;
  /** The primary's CPU per request, µs (none with one process). */
  primaryMicrosPerRequest?: number;
  failures: Record<string, number>;
}

/** Non-streaming requests to a model admitted in the worker (`free`) or through the primary (`coordinated`). */
export interface AdmissionRow extends RequestCostRow {
  admission: 'free' | 'coordinated';
}

/** Streamed Responses requests, kept (`store: true`) or not. */
export interface StoredRow extends RequestCostRow {
  store: 'off' | 'on';
}

const microsPer = (cpuSeconds: number, units: number) => (units > 0 ? (cpuSeconds * 1e6) / units : undefined);
const totalCpu = (tally: WindowTally) => [...tally.cpuSecondsByPid.values()].reduce((sum, seconds) => sum + seconds, 0);

export function streamingRow(
  load: WorkersStreamingRow['load'],
  streams: number,
  group: ProcessGroup,
  tally: WindowTally,
): WorkersStreamingRow {
  const seconds = tally.windowMs / 1000;
  const gatewaySeconds = totalCpu(tally);
  return {
    load,
    workers: group.workers,
    streams,
    chunksPerSecond: tally.units / seconds,
    gatewayMicrosPerChunk: microsPer(gatewaySeconds, tally.units),
    perWorkerMicrosPerChunk: group.workerPids.map(
      (pid) => microsPer(tally.cpuSecondsByPid.get(pid) ?? 0, tally.unitsByWorker.get(pid) ?? 0) ?? Number.NaN,
    ),
    perWorkerShare: group.workerPids.map((pid) =>
      tally.units > 0 ? (tally.unitsByWorker.get(pid) ?? 0) / tally.units : 0,
    ),
    primaryMicrosPerChunk:
      group.primaryPid === undefined
        ? undefined
        : microsPer(tally.cpuSecondsByPid.get(group.primaryPid) ?? 0, tally.units),
    gatewayCores: gatewaySeconds / seconds,
    backgroundCores: Math.max(
      0,
      (tally.machineSeconds - gatewaySeconds - tally.upstreamSeconds - tally.clientSeconds) / seconds,
    ),
    failures: tally.failures,
  };
}

export function requestCostRow(group: ProcessGroup, concurrency: number, tally: WindowTally): RequestCostRow {
  return {
    workers: group.workers,
    concurrency,
    requestsPerSecond: tally.units / (tally.windowMs / 1000),
    latency: summaryOf(tally.durations),
    gatewayMicrosPerRequest: microsPer(totalCpu(tally), tally.units),
    primaryMicrosPerRequest:
      group.primaryPid === undefined
        ? undefined
        : microsPer(tally.cpuSecondsByPid.get(group.primaryPid) ?? 0, tally.units),
    failures: tally.failures,
  };
}

function summaryOf(values: readonly number[]): SampleSummary {
  const samples = new Samples();
  for (const value of values) samples.add(value);
  return samples.summary();
}
