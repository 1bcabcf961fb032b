import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createConnection } from 'node:net';

/** The redis-server on the PATH, if any: CI installs it; a developer without it skips the files that need it. */
export const REDIS_SERVER = (() => {
  try {
    return execFileSync('which', ['redis-server'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
})();
if (REDIS_SERVER === undefined && process.env.CI) throw new Error('redis-server must be on the PATH in CI');

/** Whether a redis-server answers PING on `port`. */
function pings(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
    socket.once('connect', () => socket.write('PING\r\n'));
  });
}

/** A redis-server of a test file's own, so that it can be paused, killed and restarted without disturbing the shared one. */
export class RedisProcess {
  private child?: ChildProcess;

  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.child = spawn(
      REDIS_SERVER!,
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    const deadline = Date.now() + 10_000;
    while (!(await pings(this.port))) {
      if (Date.now() > deadline) throw new Error(`redis-server did not answer on port ${this.port}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /**
   * Stops the process and waits until the kernel shows it stopped: a command sent before the
   * signal lands would otherwise still run in time, whatever the machine's speed.
   */
  async pause(): Promise<void> {
    this.child!.kill('SIGSTOP');
    const deadline = Date.now() + 5_000;
    while (processState(this.child!.pid!) !== 'T') {
      if (Date.now() > deadline) throw new Error('redis-server did not stop');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  resume(): void {
    this.child!.kill('SIGCONT');
  }

  /** Kills it outright (no shutdown, no save) and waits for it to exit. */
  async kill(): Promise<void> {
    const child = this.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
  }
}

/** A process's state letter from /proc (`T` when stopped by a signal). */
function processState(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}
