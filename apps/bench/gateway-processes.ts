import { readdirSync, readFileSync } from 'node:fs';
import type { ChildServer } from './child-server.js';
import { sampleProcess } from './proc-stats.js';

/** A gateway of one or more processes, as the load generator sees it. */
export interface ProcessGroup {
  workers: number;
  server: ChildServer;
  /** The primary with several workers; undefined with one process. */
  primaryPid?: number;
  /** The processes that serve requests: the workers, or the one process. */
  workerPids: number[];
}

/** The processes of a gateway: with several workers, the primary's children (once they all listen). */
export async function processGroupOf(server: ChildServer, workers: number): Promise<ProcessGroup> {
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
