import { readFileSync } from 'node:fs';

/** Clock ticks per second of `/proc/<pid>/stat` times (USER_HZ: 100 on Linux x86-64 and arm64). */
export const CLOCK_TICKS_PER_SECOND = 100;

export interface ProcessSample {
  /** performance.now() when read. */
  at: number;
  /** User + system CPU time so far, in seconds. */
  cpuSeconds: number;
  rssBytes: number;
}

/** CPU time (utime + stime) and resident memory of a process, from /proc. */
export function sampleProcess(pid: number): ProcessSample {
  const at = performance.now();
  return {
    at,
    cpuSeconds: cpuSecondsOf(readFileSync(`/proc/${pid}/stat`, 'utf8')),
    rssBytes: rssBytesOf(readFileSync(`/proc/${pid}/status`, 'utf8')),
  };
}

/** utime + stime (fields 14 and 15) of a `/proc/<pid>/stat` line, in seconds. */
export function cpuSecondsOf(stat: string): number {
  // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/** VmRSS of a `/proc/<pid>/status` text, in bytes. */
export function rssBytesOf(status: string): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  return match ? Number(match[1]) * 1024 : 0;
}

/** CPU used between two samples, as microseconds per unit of work (e.g. per streamed chunk). */
export function cpuMicrosPer(before: ProcessSample, after: ProcessSample, units: number): number | undefined {
  return units > 0 ? ((after.cpuSeconds - before.cpuSeconds) * 1e6) / units : undefined;
}

/** CPU used between two samples as a share of one core (1 = one core busy all the time). */
export function coreShare(before: ProcessSample, after: ProcessSample): number {
  const wallSeconds = (after.at - before.at) / 1000;
  return wallSeconds > 0 ? (after.cpuSeconds - before.cpuSeconds) / wallSeconds : 0;
}

/** The soft limit on open files of this process (children inherit it), from /proc/self/limits. */
export function openFileSoftLimit(): number | undefined {
  try {
    const match = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (!match) return undefined;
    return match[1] === 'unlimited' ? Number.POSITIVE_INFINITY : Number(match[1]);
  } catch {
    return undefined;
  }
}
