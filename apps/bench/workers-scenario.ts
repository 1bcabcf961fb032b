import { readdirSync, readFileSync } from 'node:fs';
import { measureAdmissionRoundTrips, type RoundTripResult } from './admission-round-trip.js';
import type { BenchStack, BenchTarget } from './bench-stack.js';
import { chatUrlOf } from './bench-stack.js';
import { postChat, streamChat } from './chat-client.js';
import type { ChildServer } from './child-server.js';
import { MeasureWindow, runClosedLoop } from './closed-loop.js';
import { benchModels, chatBody, gatewayConfig } from './gateway-configs.js';
import { interleave } from './interleave.js';
import { loopbackUrl } from './loopback.js';
import { machineBusySeconds } from './load-tally.js';
import { sampleProcess } from './proc-stats.js';
import { responsesBody, streamResponses } from './responses-client.js';
import { Samples, type SampleSummary } from './samples.js';
import { callFor, plan, warmUp, type LoadTiming } from './streaming-load.js';

/** The response header naming the worker that answered (a gateway with several workers sets it). */
const WORKER_HEADER = 'x-gantry-worker';

/** A model with a concurrency limit too high to bind: every request's admission goes through the primary. */
const COORDINATED_MODEL = { name: 'stub-coordinated', engine: 'stub', maxConcurrency: 1_000_000 };

export interface WorkersPlan {
  /** The worker counts compared, in one run (1: one process, no cluster). */
  counts: number[];
  /** Unmeasured load on each fresh gateway before it is measured (a quarter more for the coordinated model). */
  warmupMs: number;
  /** As many chunks as the machine gives: chunks/s. */
  saturated: { streams: number; tokens: number; rounds: number; timing: LoadTiming };
  /**
   * The same load on every worker, well below what the machine gives (the mock paced at 10 ms a
   * token; `streamsPerWorker` streams for each worker), so that no process waits for a core: CPU
   * per chunk per worker as a cost, comparable whatever the number of workers.
   */
  paced: { streamsPerWorker: number; tokens: number; rounds: number; timing: LoadTiming };
  /** Non-streaming requests with the most workers, admitted in the worker or through the primary. */
  admission: { concurrencies: number[]; tokens: number; rounds: number; timing: LoadTiming };
  /** Admissions alone (no HTTP) through a primary, so many in flight at once, each for `durationMs`. */
  roundTrips: { inFlight: number[]; durationMs: number };
  /**
   * Streamed Responses requests to the stub with `store: false` and `store: true` (the memory
   * store: in the process with one, in the primary with workers), on every gateway: what keeping
   * a response costs per request, in one process and through the primary.
   */
  stored: { concurrency: number; tokens: number; rounds: number; timing: LoadTiming };
}

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

export interface WorkersResults {
  plan: WorkersPlan;
  streaming: WorkersStreamingRow[];
  admission: AdmissionRow[];
  stored: StoredRow[];
  roundTrips: RoundTripResult[];
}

/** A gateway of one or more processes, as the load generator sees it. */
interface ProcessGroup {
  workers: number;
  server: ChildServer;
  /** The primary with several workers; undefined with one process. */
  primaryPid?: number;
  /** The processes that serve requests: the workers, or the one process. */
  workerPids: number[];
}

/** What one measured window counted. */
interface WindowTally {
  windowMs: number;
  /** Chunks (streaming) or answers (non-streaming) inside the window, by the worker that sent them. */
  unitsByWorker: Map<number, number>;
  units: number;
  cpuSecondsByPid: Map<number, number>;
  /** Durations of the requests that ended inside the window (non-streaming), ms. */
  durations: number[];
  /** The mock upstream's CPU. */
  upstreamSeconds: number;
  machineSeconds: number;
  clientSeconds: number;
  failures: Record<string, number>;
}

/**
 * Workers: one gateway of one process and one of two workers, started side by side on the same
 * mock and measured in turns. Streaming through the HTTP engine gives chunks/s, the gateway's CPU
 * per chunk (all its processes), each worker's CPU per chunk it served, and the primary's share.
 * Non-streaming requests to a model without a concurrency limit (admitted in the worker) and to
 * one with a limit (each admission a round trip to the primary: reserve, then release) give what
 * coordinated admission costs per request; admissions alone, without HTTP, give its floor.
 * Streamed Responses kept or not, in one process and through the primary, give what the
 * instance's memory store costs per request.
 */
export async function runWorkers(
  stack: BenchStack,
  workersPlan: WorkersPlan,
  progress: (line: string) => void,
): Promise<WorkersResults> {
  const mock = await stack.startMock([], 'mock-workers');
  const models = [...benchModels(mock.url.toString()), COORDINATED_MODEL];
  const groups: ProcessGroup[] = [];
  for (const workers of workersPlan.counts) {
    const config = gatewayConfig({ models });
    // The default response store (memory): with workers, the primary's.
    const server = await stack.startGateway(`workers-${workers}`, {
      ...config,
      server: { ...(config.server as object), workers },
    });
    groups.push(await processGroupOf(server, workers));
  }
  const target = (group: ProcessGroup, model: string): BenchTarget => ({
    label: `${group.workers} worker(s)`,
    chatUrl: chatUrlOf(group.server.url),
    model,
    upstreamPid: mock.pid,
  });

  for (const group of groups) {
    progress(`workers: warming up the gateway of ${group.workers} worker(s)`);
    await warmUp(target(group, 'mock'), 16, 256, workersPlan.warmupMs);
    await warmUp(target(group, COORDINATED_MODEL.name), 16, 16, workersPlan.warmupMs / 4);
  }

  const streaming: WorkersStreamingRow[] = [];
  const saturated = workersPlan.saturated;
  progress(
    `workers: saturated streaming, ${saturated.streams} streams, ${groups.map((group) => group.workers).join(' / ')} worker(s), ${saturated.rounds} round(s)`,
  );
  const busy = await interleave(groups, saturated.rounds, (group) =>
    measureRound(
      group,
      target(group, 'mock'),
      saturated.streams,
      chatBody('mock', saturated.tokens, true),
      saturated.timing,
      'chat-stream',
    ),
  );
  groups.forEach((group, index) =>
    streaming.push(streamingRow('saturated', saturated.streams, group, addWindows(busy[index]))),
  );
  const paced = workersPlan.paced;
  // The control: one-process gateways side by side, as many as the most workers, each with the
  // streams of one worker. What they cost more per chunk than one alone is the machine (busy
  // processes sharing its cores), not the cluster.
  const most = groups.at(-1)!;
  const singles = [groups[0]];
  for (let index = 1; index < most.workers; index += 1) {
    singles.push(
      await processGroupOf(await stack.startGateway(`workers-1-${index + 1}`, gatewayConfig({ models })), 1),
    );
  }
  for (const single of singles.slice(1)) await warmUp(target(single, 'mock'), 16, 256, workersPlan.warmupMs);
  const sideBySide: ProcessGroup = {
    workers: singles.length,
    server: singles[0].server,
    workerPids: singles.flatMap((single) => single.workerPids),
  };
  const pacedTargets = [...groups, sideBySide];
  progress(
    `workers: paced streaming, ${paced.streamsPerWorker} streams per worker (and per process side by side), ${paced.rounds} round(s)`,
  );
  const calm = await interleave(pacedTargets, paced.rounds, async (group) => {
    const body = chatBody('mock-paced', paced.tokens, true);
    if (group !== sideBySide)
      return measureRound(
        group,
        target(group, 'mock-paced'),
        paced.streamsPerWorker * group.workers,
        body,
        paced.timing,
        'chat-stream',
      );
    return sideBySideTally(
      await Promise.all(
        singles.map((single) =>
          measureRound(single, target(single, 'mock-paced'), paced.streamsPerWorker, body, paced.timing, 'chat-stream'),
        ),
      ),
    );
  });
  pacedTargets.forEach((group, index) =>
    streaming.push(
      streamingRow(
        group === sideBySide ? 'side by side' : 'paced',
        paced.streamsPerWorker * group.workers,
        group,
        addWindows(calm[index]),
      ),
    ),
  );
  for (const single of singles.slice(1)) await stack.stop(single.server);

  const { concurrencies, tokens, rounds, timing } = workersPlan.admission;
  const admissionTargets = concurrencies.flatMap((concurrency) =>
    (['free', 'coordinated'] as const).map((admission) => ({ concurrency, admission })),
  );
  progress(
    `workers: admission with ${most.workers} worker(s), ${concurrencies.join(' / ')} concurrent non-streaming requests, free / coordinated, ${rounds} round(s)`,
  );
  const answered = await interleave(admissionTargets, rounds, ({ concurrency, admission }) => {
    const model = admission === 'free' ? 'stub' : COORDINATED_MODEL.name;
    return measureRound(most, target(most, model), concurrency, chatBody(model, tokens, false), timing, 'chat');
  });
  const admission = admissionTargets.map(({ concurrency, admission: kind }, index): AdmissionRow => ({
    ...requestCostRow(most, concurrency, addWindows(answered[index])),
    admission: kind,
  }));

  const stored = workersPlan.stored;
  const storedTargets = groups.flatMap((group) => (['off', 'on'] as const).map((store) => ({ group, store })));
  progress(
    `workers: stored responses, ${stored.concurrency} streams, store off / on, ${groups.map((group) => group.workers).join(' / ')} worker(s), ${stored.rounds} round(s)`,
  );
  const keep = (group: ProcessGroup, store: StoredRow['store'], timing: LoadTiming) =>
    measureRound(
      group,
      { ...target(group, 'stub'), chatUrl: responsesUrlOf(group) },
      stored.concurrency,
      responsesBody('stub', stored.tokens, store),
      timing,
      'responses',
    );
  for (const group of groups) await keep(group, 'on', { warmupMs: workersPlan.warmupMs / 4, measureMs: 0, rampMs: 0 });
  const kept = await interleave(storedTargets, stored.rounds, ({ group, store }) => keep(group, store, stored.timing));
  const storedRows = storedTargets.map(({ group, store }, index): StoredRow => ({
    ...requestCostRow(group, stored.concurrency, addWindows(kept[index])),
    store,
  }));

  for (const group of groups) await stack.stop(group.server);
  await stack.stop(mock);

  progress(`workers: admission round trips alone, ${workersPlan.roundTrips.inFlight.join(' / ')} in flight`);
  const roundTrips: RoundTripResult[] = [];
  for (const inFlight of workersPlan.roundTrips.inFlight)
    roundTrips.push(await measureAdmissionRoundTrips(inFlight, workersPlan.roundTrips.durationMs));
  return { plan: workersPlan, streaming, admission, stored: storedRows, roundTrips };
}

/** The processes of a gateway: with several workers, the primary's children (once they all listen). */
async function processGroupOf(server: ChildServer, workers: number): Promise<ProcessGroup> {
  if (workers === 1) return { workers, server, workerPids: [server.pid] };
  const deadline = performance.now() + 10_000;
  for (;;) {
    const children = childPidsOf(server.pid);
    if (children.length === workers) return { workers, server, primaryPid: server.pid, workerPids: children };
    if (performance.now() > deadline)
      throw new Error(`the gateway of ${workers} workers has ${children.length} child processes`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * CPU time of a process, all its threads, in seconds, to the nanosecond: the scheduler's
 * `se.sum_exec_runtime` (ms) of each thread in /proc. The clock ticks of /proc/<pid>/stat (10 ms)
 * are too coarse for a primary that spends microseconds per request. Falls back to them.
 */
export function preciseCpuSeconds(pid: number): number {
  try {
    let ms = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const match = /^se\.sum_exec_runtime\s*:\s*([\d.]+)$/m.exec(
        readFileSync(`/proc/${pid}/task/${task}/sched`, 'utf8'),
      );
      if (!match) return sampleProcess(pid).cpuSeconds;
      ms += Number(match[1]);
    }
    return ms / 1000;
  } catch {
    return sampleProcess(pid).cpuSeconds;
  }
}

/** The processes whose parent is `pid`, from /proc. */
export function childPidsOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Field 4, the parent, after the command name (which may hold spaces and parentheses).
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === pid) children.push(Number(entry));
    } catch {
      // The process ended while the list was read.
    }
  }
  return children.sort((a, b) => a - b);
}

/** How a round's requests are sent and counted: chat streams (chunks), chat answers or Responses streams (requests). */
type RoundKind = 'chat-stream' | 'chat' | 'responses';

async function measureRound(
  group: ProcessGroup,
  target: BenchTarget,
  concurrency: number,
  body: string,
  timing: LoadTiming,
  kind: RoundKind,
): Promise<WindowTally> {
  const pids = [...(group.primaryPid === undefined ? [] : [group.primaryPid]), ...group.workerPids];
  const window = new MeasureWindow();
  const unitsByWorker = new Map<number, number>();
  const durations: number[] = [];
  const count = (worker: number) => unitsByWorker.set(worker, (unitsByWorker.get(worker) ?? 0) + 1);
  const { call, close } = callFor(target, concurrency, body);
  const snapshot = () => ({
    cpu: new Map(pids.map((pid) => [pid, preciseCpuSeconds(pid)])),
    upstream: target.upstreamPid === undefined ? 0 : preciseCpuSeconds(target.upstreamPid),
    machine: machineBusySeconds(),
    client: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
  });
  const run = await runClosedLoop(
    plan(concurrency, timing),
    () => {
      let worker = group.workerPids[0];
      const onOpen = (_at: number, headers: Record<string, unknown>) => {
        if (headers[WORKER_HEADER] !== undefined) worker = Number(headers[WORKER_HEADER]);
      };
      if (kind !== 'chat-stream') {
        const sentAt = performance.now();
        const handle = kind === 'chat' ? postChat(call) : streamResponses(call);
        void handle.done.then((outcome) => {
          if (outcome.kind === 'completed' && window.contains(outcome.at)) durations.push(outcome.at - sentAt);
        });
        return handle;
      }
      return streamChat(call, {
        onOpen,
        onFrame: (kind, at) => {
          if (kind !== 'done' && window.contains(at)) count(worker);
        },
      });
    },
    snapshot,
    window,
  );
  close();
  const [before, after] = run.marks as [ReturnType<typeof snapshot>, ReturnType<typeof snapshot>];
  const units =
    kind === 'chat-stream' ? [...unitsByWorker.values()].reduce((sum, value) => sum + value, 0) : run.completedInWindow;
  return {
    windowMs: run.window.durationMs,
    unitsByWorker,
    units,
    cpuSecondsByPid: new Map(pids.map((pid) => [pid, after.cpu.get(pid)! - before.cpu.get(pid)!])),
    durations,
    upstreamSeconds: after.upstream - before.upstream,
    machineSeconds: after.machine - before.machine,
    clientSeconds: after.client - before.client,
    failures: run.failures,
  };
}

/**
 * The windows of gateways measured at the same time as one: their units and CPU together over one
 * window's length. The mock's and the machine's CPU were read by each over the same time: once.
 */
function sideBySideTally(windows: readonly WindowTally[]): WindowTally {
  const sum = addWindows(windows);
  return {
    ...sum,
    windowMs: sum.windowMs / windows.length,
    upstreamSeconds: sum.upstreamSeconds / windows.length,
    machineSeconds: sum.machineSeconds / windows.length,
  };
}

function addWindows(windows: readonly WindowTally[]): WindowTally {
  const sum: WindowTally = {
    windowMs: 0,
    unitsByWorker: new Map(),
    units: 0,
    cpuSecondsByPid: new Map(),
    durations: [],
    upstreamSeconds: 0,
    machineSeconds: 0,
    clientSeconds: 0,
    failures: {},
  };
  const addTo = (map: Map<number, number>, key: number, value: number) => map.set(key, (map.get(key) ?? 0) + value);
  for (const window of windows) {
    sum.windowMs += window.windowMs;
    sum.units += window.units;
    sum.machineSeconds += window.machineSeconds;
    sum.upstreamSeconds += window.upstreamSeconds;
    sum.clientSeconds += window.clientSeconds;
    for (const [worker, units] of window.unitsByWorker) addTo(sum.unitsByWorker, worker, units);
    for (const [pid, seconds] of window.cpuSecondsByPid) addTo(sum.cpuSecondsByPid, pid, seconds);
    for (const duration of window.durations) sum.durations.push(duration);
    for (const [reason, count] of Object.entries(window.failures))
      sum.failures[reason] = (sum.failures[reason] ?? 0) + count;
  }
  return sum;
}

const microsPer = (cpuSeconds: number, units: number) => (units > 0 ? (cpuSeconds * 1e6) / units : undefined);
const totalCpu = (tally: WindowTally) => [...tally.cpuSecondsByPid.values()].reduce((sum, seconds) => sum + seconds, 0);

function streamingRow(
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

function requestCostRow(group: ProcessGroup, concurrency: number, tally: WindowTally): RequestCostRow {
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

/** `POST /v1/responses` of a gateway. */
function responsesUrlOf(group: ProcessGroup): URL {
  return loopbackUrl(new URL('/v1/responses', group.server.url).toString());
}

function summaryOf(values: readonly number[]): SampleSummary {
  const samples = new Samples();
  for (const value of values) samples.add(value);
  return samples.summary();
}
