import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/**
 * The packages' own Node launchers, which find the native binary of this platform among their
 * optional dependencies. Claude Code's `bin/claude.exe` is a placeholder until its postinstall
 * copies the binary over it, and install scripts are not run here, so its fallback launcher is used.
 */
export const CODEX_LAUNCHER = join(dirname(require.resolve('@openai/codex/package.json')), 'bin', 'codex.js');
export const CLAUDE_LAUNCHER = join(
  dirname(require.resolve('@anthropic-ai/claude-code/package.json')),
  'cli-wrapper.cjs',
);

export interface AgentRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A fresh HOME for one agent, and a project folder inside it to run in. */
export function agentHome(name: string): { home: string; workdir: string } {
  const home = mkdtempSync(join(tmpdir(), `gantry-${name}-`));
  const workdir = join(home, 'project');
  mkdirSync(workdir);
  return { home, workdir };
}

/**
 * Runs `node LAUNCHER ARGS` with only the given environment (plus PATH, for the launcher's node),
 * stdin closed, in its own process group so that a timeout kills the native agent with its launcher.
 */
export function runAgent(
  launcher: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<AgentRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [launcher, ...args], {
      cwd: options.cwd,
      env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), options.timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
