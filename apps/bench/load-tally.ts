import type { BenchTarget } from './bench-stack.js';
import { readFileSync } from 'node:fs';
import { CLOCK_TICKS_PER_SECOND, sampleProcess, type ProcessSample } from './proc-stats.js';

/**
 * The raw totals of one measurement window: work done, and CPU seconds spent by the gateway, the
 * mock, the load generator and the whole machine. Windows of the same target (rounds interleaved
 * with other targets) add up, and the figures are derived from the sums.
 */
export interface Tally {
  windowMs: number;
  /** Chunks (streaming) or answers (non-streaming) received inside the window. */
  units: number;
  tokens: number;
  requests: number;
  gatewayCpuSeconds?: number;
  upstreamCpuSeconds?: number;
  clientCpuSeconds: number;
  /** Busy CPU time of the whole machine (all cores), from /proc/stat. */
  machineCpuSeconds: number;
  failures: Record<string, number>;
}

export function emptyTally(): Tally {
  return { windowMs: 0, units: 0, tokens: 0, requests: 0, clientCpuSeconds: 0, machineCpuSeconds: 0, failures: {} };
}

export function addTallies(tallies: readonly Tally[]): Tally {
  const sum = emptyTally();
  const add = (a: number | undefined, b: number | undefined) =>
    a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0);
  for (const tally of tallies) {
    sum.windowMs += tally.windowMs;
    sum.units += tally.units;
    sum.tokens += tally.tokens;
    sum.requests += tally.requests;
    sum.gatewayCpuSeconds = add(sum.gatewayCpuSeconds, tally.gatewayCpuSeconds);
    sum.upstreamCpuSeconds = add(sum.upstreamCpuSeconds, tally.upstreamCpuSeconds);
    sum.clientCpuSeconds += tally.clientCpuSeconds;
    sum.machineCpuSeconds += tally.machineCpuSeconds;
    for (const [reason, count] of Object.entries(tally.failures))
      sum.failures[reason] = (sum.failures[reason] ?? 0) + count;
  }
  return sum;
}

/** CPU per unit of work (µs), and in cores, derived from a tally. */
export interface CpuCost {
  gatewayMicrosPerUnit?: number;
  upstreamMicrosPerUnit?: number;
  /** The load generator (this process): what reading the answers costs the client. */
  clientMicrosPerUnit?: number;
  /** Gateway CPU over the window, in cores (1 = one core busy all the time). */
  gatewayCores?: number;
  /**
   * CPU used by processes outside the benchmark while it measured, in cores: other work on the
   * machine, which the figures of the same window suffered from.
   */
  backgroundCores?: number;
}

export function cpuCostOf(tally: Tally): CpuCost {
  const seconds = tally.windowMs / 1000;
  const perUnit = (cpuSeconds: number | undefined) =>
    cpuSeconds === undefined || tally.units === 0 ? undefined : (cpuSeconds * 1e6) / tally.units;
  const ours = (tally.gatewayCpuSeconds ?? 0) + (tally.upstreamCpuSeconds ?? 0) + tally.clientCpuSeconds;
  return {
    gatewayMicrosPerUnit: perUnit(tally.gatewayCpuSeconds),
    upstreamMicrosPerUnit: perUnit(tally.upstreamCpuSeconds),
    clientMicrosPerUnit: perUnit(tally.clientCpuSeconds),
    gatewayCores:
      tally.gatewayCpuSeconds === undefined || seconds === 0 ? undefined : tally.gatewayCpuSeconds / seconds,
    backgroundCores: seconds === 0 ? undefined : Math.max(0, (tally.machineCpuSeconds - ours) / seconds),
  };
}

/** CPU counters of every process a window watches, read at its edges. */
export interface CpuSnapshot {
  gateway?: ProcessSample;
  upstream?: ProcessSample;
  clientSeconds: number;
  machineSeconds: number;
}

export function cpuSnapshot(target: BenchTarget): CpuSnapshot {
  const { user, system } = process.cpuUsage();
  return {
    gateway: target.gatewayPid === undefined ? undefined : sampleProcess(target.gatewayPid),
    upstream: target.upstreamPid === undefined ? undefined : sampleProcess(target.upstreamPid),
    clientSeconds: (user + system) / 1e6,
    machineSeconds: machineBusySeconds(),
  };
}

/** Fills a tally's CPU fields from the snapshots at the window's start and end. */
export function cpuBetween(
  before: CpuSnapshot,
  after: CpuSnapshot,
): Pick<Tally, 'gatewayCpuSeconds' | 'upstreamCpuSeconds' | 'clientCpuSeconds' | 'machineCpuSeconds'> {
  const delta = (a?: ProcessSample, b?: ProcessSample) => (a && b ? b.cpuSeconds - a.cpuSeconds : undefined);
  return {
    gatewayCpuSeconds: delta(before.gateway, after.gateway),
    upstreamCpuSeconds: delta(before.upstream, after.upstream),
    clientCpuSeconds: after.clientSeconds - before.clientSeconds,
    machineCpuSeconds: after.machineSeconds - before.machineSeconds,
  };
}

/** Busy time of all cores (user, nice, system, irq, softirq, steal) from the `cpu` line of /proc/stat. */
export function machineBusySeconds(stat = readFileSync('/proc/stat', 'utf8')): number {
  const fields = stat.slice(0, stat.indexOf('\n')).trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = fields;
  return (user + nice + system + irq + softirq + (steal ?? 0)) / CLOCK_TICKS_PER_SECOND;
}
