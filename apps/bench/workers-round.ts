import type { BenchTarget } from './bench-stack.js';
import { postChat, streamChat } from './chat-client.js';
import { MeasureWindow, runClosedLoop } from './closed-loop.js';
import { preciseCpuSeconds, type ProcessGroup } from './gateway-processes.js';
import { machineBusySeconds } from './load-tally.js';
import { streamResponses } from './responses-client.js';
import { callFor, plan, type LoadTiming } from './streaming-load.js';

/** The response header naming the worker that answered (a gateway with several workers sets it). */
const WORKER_HEADER = 'x-gantry-worker';

/** What one measured window counted. */
export interface WindowTally {
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

/** How a round's requests are sent and counted: chat streams (chunks), chat answers or Responses streams (requests). */
export type RoundKind = 'chat-stream' | 'chat' | 'responses';

export async function measureRound(
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
export function sideBySideTally(windows: readonly WindowTally[]): WindowTally {
  const sum = addWindows(windows);
  return {
    ...sum,
    windowMs: sum.windowMs / windows.length,
    upstreamSeconds: sum.upstreamSeconds / windows.length,
    machineSeconds: sum.machineSeconds / windows.length,
  };
}

export function addWindows(windows: readonly WindowTally[]): WindowTally {
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
