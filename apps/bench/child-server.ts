import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { delay } from './closed-loop.js';
import { loopbackUrl } from './loopback.js';

/** A server the benchmark started as a child process (the mock upstream, a gateway). */
export interface ChildServer {
  name: string;
  pid: number;
  /** The URL it printed when it started listening, checked to be loopback. */
  url: URL;
  logPath: string;
  /** SIGTERM, then SIGKILL after `graceMs` (0: SIGKILL at once, a crash); resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => running.forEach((child) => child.kill('SIGKILL')));

export interface ChildSpec {
  name: string;
  /** The program (default: this `node`). */
  command?: string;
  /** Its arguments (for `node`, the script first). */
  args: string[];
  cwd: string;
  /** stdout and stderr go to this file, as they would to a log collector (no pipe to drain). */
  logPath: string;
  /**
   * Matches the line announcing the listening URL (its first group is the URL), or the URL itself
   * for a program that announces nothing: it is up once that address accepts connections.
   */
  listening: RegExp | URL;
  startTimeoutMs: number;
  env?: Record<string, string>;
}

/** Starts `node <args>` (or `command`) and waits for it to listen. */
export async function startChildServer(spec: ChildSpec): Promise<ChildServer> {
  const log = openSync(spec.logPath, 'w');
  const child = spawn(spec.command ?? process.execPath, spec.args, {
    cwd: spec.cwd,
    stdio: ['ignore', log, log],
    env: { ...process.env, ...spec.env },
  });
  closeSync(log);
  running.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => running.delete(child));
  let spawnError: Error | undefined;
  child.once('error', (error) => (spawnError = error));

  const deadline = performance.now() + spec.startTimeoutMs;
  let url: URL | undefined;
  while (url === undefined) {
    if (spawnError) throw new Error(`${spec.name} could not start: ${spawnError.message}`);
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${spec.name} exited before listening:\n${tail(spec.logPath)}`);
    }
    if (performance.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${spec.name} did not start listening within ${spec.startTimeoutMs} ms:\n${tail(spec.logPath)}`);
    }
    if (spec.listening instanceof URL) {
      if (await accepts(spec.listening)) url = loopbackUrl(spec.listening.toString());
      else await delay(25);
      continue;
    }
    const match = spec.listening.exec(readFileSync(spec.logPath, 'utf8'));
    if (match) url = loopbackUrl(match[1]);
    else await delay(25);
  }

  return {
    name: spec.name,
    pid: child.pid!,
    url,
    logPath: spec.logPath,
    stop: async (graceMs = 5000) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(graceMs === 0 ? 'SIGKILL' : 'SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Whether `url`'s host and port accept a TCP connection now. */
function accepts(url: URL): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** The last lines of a log file, for error messages. */
export function tail(path: string, lines = 20): string {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
