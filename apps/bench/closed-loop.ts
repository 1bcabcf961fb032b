import type { RequestHandle, RequestOutcome } from './chat-client.js';

/** A measurement window: open from `start` (inclusive) to `end` (exclusive), once set. */
export class MeasureWindow {
  start?: number;
  end?: number;

  contains(at: number): boolean {
    return this.start !== undefined && at >= this.start && (this.end === undefined || at < this.end);
  }

  get durationMs(): number {
    return this.start === undefined || this.end === undefined ? 0 : this.end - this.start;
  }
}

export interface ClosedLoopPlan {
  /** Requests kept in flight: each worker starts its next request when the previous one ends. */
  concurrency: number;
  /** Run before the window opens (connections, JIT, pools warm up); not measured. */
  warmupMs: number;
  measureMs: number;
  /** A hard cap on requests started, whatever the time. */
  maxRequests: number;
  /** Requests still in flight when the window closes get this long to end, then are aborted. */
  drainMs: number;
  /**
   * Worker i sends its first request i / concurrency of this after the start. Clients that all
   * start at once, with answers of equal length, stay in lockstep: every answer ends together and
   * the next requests arrive as one burst, which measures a queue, not a steady load.
   */
  rampMs?: number;
}

export interface ClosedLoopResult {
  window: MeasureWindow;
  started: number;
  /** Requests that completed inside the window. */
  completedInWindow: number;
  /** Failures by reason, over the whole run (warm-up included). */
  failures: Record<string, number>;
  /** What `onWindow` returned at the window's start and end. */
  marks: [unknown, unknown];
}

/**
 * Closed-loop load: `concurrency` workers each send a request, wait for its end and send the
 * next, until the window closes or `maxRequests` were started. `onWindow('start' | 'end')` runs
 * as the window opens and closes (to sample the servers' CPU and memory); whatever it returns is
 * kept in `marks`. Pass `window` to count per-frame events against it while the load runs.
 */
export async function runClosedLoop(
  plan: ClosedLoopPlan,
  start: () => RequestHandle,
  onWindow: (edge: 'start' | 'end') => unknown = () => undefined,
  window: MeasureWindow = new MeasureWindow(),
): Promise<ClosedLoopResult> {
  const failures: Record<string, number> = {};
  const inFlight = new Set<RequestHandle>();
  const marks: [unknown, unknown] = [undefined, undefined];
  let started = 0;
  let completedInWindow = 0;
  let stopping = false;

  const record = (outcome: RequestOutcome) => {
    if (outcome.kind === 'completed' && window.contains(outcome.at)) completedInWindow += 1;
    if (outcome.kind === 'failed') failures[outcome.reason] = (failures[outcome.reason] ?? 0) + 1;
  };
  const worker = async (index: number) => {
    const rampMs = ((plan.rampMs ?? 0) * index) / plan.concurrency;
    if (rampMs > 0) await delay(rampMs);
    // oxlint-disable-next-line no-unmodified-loop-condition -- set by the timer that ends the run
    while (!stopping && started < plan.maxRequests) {
      started += 1;
      const handle = start();
      inFlight.add(handle);
      record(await handle.done);
      inFlight.delete(handle);
    }
  };

  const opened = delay(plan.warmupMs).then(() => {
    window.start = performance.now();
    marks[0] = onWindow('start');
  });
  const closed = opened
    .then(() => delay(plan.measureMs))
    .then(() => {
      window.end = performance.now();
      marks[1] = onWindow('end');
      stopping = true;
    });
  const workers = Promise.all(Array.from({ length: plan.concurrency }, (_, index) => worker(index)));
  await Promise.race([workers.then(() => closed), closed]);
  const drainTimer = setTimeout(() => inFlight.forEach((handle) => handle.abort()), plan.drainMs);
  await workers;
  clearTimeout(drainTimer);
  return { window, started, completedInWindow, failures, marks };
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
