import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The CLI as operators run it: the built entry point (npm test builds first), a real process.
const ENTRY = join(import.meta.dirname, '..', '..', 'dist', 'src', 'main.js');

export interface CliProcess {
  child: ChildProcess;
  exited: Promise<number | null>;
  /** The base URL it announced once listening. */
  listening: Promise<string>;
  output: () => { stdout: string; stderr: string };
}

/** Spawns `node dist/src/main.js ARGS` and collects its output. */
export function startCli(args: string[], env: Record<string, string> = {}): CliProcess {
  const child = spawn(process.execPath, [ENTRY, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', () => {
      const match = /Gantry listening on (http:\/\/\S+)/.exec(stdout);
      if (match) resolve(match[1]);
    });
    void exited.then((code) => reject(new Error(`exited with ${code}: ${stderr}`)));
  });
  listening.catch(() => undefined);
  return { child, exited, listening, output: () => ({ stdout, stderr }) };
}

/** Writes a YAML configuration to a fresh temporary file and returns its path. */
export function writeConfig(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'gantry-cli-')), 'gantry.yaml');
  writeFileSync(file, text);
  return file;
}

/** The JSON log lines (pino) among a process's standard output, in order. */
export function logLinesOf(stdout: string): Array<{ level: number; msg: string; [key: string]: unknown }> {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line)];
      } catch {
        return [];
      }
    });
}
