import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { StubEngine } from '../src/engines/stub/stub-engine.js';
import { eventually, startGateway, type RunningGateway } from './support/gateway.js';

// The terminal client as users run it: the built program (npm test builds first), a real process.
const ENTRY = join(import.meta.dirname, '..', 'dist', 'apps', 'chat', 'main.js');
const running: ChildProcessWithoutNullStreams[] = [];
let gateway: RunningGateway;

beforeAll(async () => {
  gateway = await startGateway({
    keepalive: { mode: 'chunks', intervalMs: 100 },
    models: [
      { name: 'stub', engine: 'stub' },
      { name: 'slow', engine: 'stub', prefillMs: 800, tokenIntervalMs: 50 },
      { name: 'thinker', engine: 'stub', reasoning: 'mull it over' },
    ],
  });
});

afterEach(() => {
  for (const child of running.splice(0)) child.kill('SIGKILL');
});

afterAll(async () => {
  await gateway?.close();
});

const slowEngine = () => gateway.registry.resolve('slow').engine as StubEngine;
const stripAnsi = (text: string) => text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
/** What the terminal shows: an erase-line drops what the line held (the status line), no styles, no CRs. */
const screen = (text: string) => stripAnsi(text.replace(/[^\n]*\r\x1b\[K/g, '')).replace(/\r/g, '');

function launch(command: string, args: string[]) {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  running.push(child);
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk) => (output.stdout += chunk));
  child.stderr.on('data', (chunk) => (output.stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output, exited };
}

/** One-shot mode with stdout and stderr as pipes. */
async function oneShot(args: string[], stdin?: string) {
  const run = launch(process.execPath, [ENTRY, '--url', gateway.url, ...args]);
  run.child.stdin.end(stdin);
  const code = await run.exited;
  return { code, ...run.output };
}

/** The interactive chat on a pseudo-terminal (util-linux `script`), typed into like a user. */
function startInTerminal(model: string) {
  const command = `stty cols 200 rows 50; exec '${process.execPath}' '${ENTRY}' --url ${gateway.url} --model ${model}`;
  const run = launch('script', ['-qfec', command, '/dev/null']);
  /** Waits until the output from offset `from` on, styles removed, matches `pattern`. */
  const waitFor = async (pattern: RegExp, from = 0, timeoutMs = 8000): Promise<void> => {
    const seen = () => stripAnsi(run.output.stdout.slice(from));
    if (!(await eventually(() => pattern.test(seen()), timeoutMs))) {
      throw new Error(`no ${pattern} in the terminal output:\n${JSON.stringify(seen())}`);
    }
  };
  return {
    type: (keys: string) => run.child.stdin.write(keys),
    waitFor,
    /** An offset into the output, to look only at what comes after it. */
    mark: () => run.output.stdout.length,
    /** What the terminal shows from `from` on, as lines. */
    linesSince: (from: number) => screen(run.output.stdout.slice(from)).split('\n'),
    exited: run.exited,
  };
}

describe('npm run chat -- --prompt TEXT (one-shot)', () => {
  it.each(['chat', 'responses', 'messages'])(
    'answers through the %s API, reasoning on stderr and the answer alone on stdout',
    async (api) => {
      const result = await oneShot(['--api', api, '--model', 'thinker', '--prompt', 'alpha beta']);
      expect(result.code).toBe(0);
      expect(result.stdout).toBe('alpha beta\n');
      expect(result.stderr).toContain('mull it over');
      expect(result.stderr).toMatch(/prompt 2 tok · completion 5 tok/);
    },
  );

  it('prints exactly the answer on stdout and the stats on stderr, with no escapes when piped', async () => {
    const result = await oneShot(['--model', 'stub', '--prompt', 'one two three']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('one two three\n');
    expect(result.stderr).toMatch(/^prompt 3 tok · completion 3 tok · TTFT \d+\.\d\d s · \d+\.\d tok\/s\n$/);
  });

  it('reads the prompt from a piped stdin and reports a refused request on stderr with exit code 1', async () => {
    const piped = await oneShot(['--model', 'stub'], 'from the pipe\n');
    expect(piped).toMatchObject({ code: 0, stdout: 'from the pipe\n' });
    const refused = await oneShot(['--model', 'nope', '--prompt', 'hi']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/^error: HTTP 404: .*nope/);
  });
});

describe('npm run chat (interactive, in a terminal)', () => {
  it('streams answers after a live status line, keeps the conversation, stops an answer on Ctrl-C and exits on Ctrl-C', async () => {
    const terminal = startInTerminal('slow');
    await terminal.waitFor(/> $/);

    // First turn: the status line counts the heartbeats of the 800 ms prefill, then gives way to the answer.
    let from = terminal.mark();
    terminal.type('alpha beta gamma\r');
    await terminal.waitFor(/prefilling… ♥ [2-9]\d* heartbeats · \d+\.\d s/, from);
    await terminal.waitFor(/prompt 3 tok · completion 3 tok · TTFT \d+\.\d\d s · \d+\.\d tok\/s\r?\n[^]*> $/, from);
    // The typed line, the answer alone on its line (no trace of the status line), the stats, the prompt.
    expect(terminal.linesSince(from)).toEqual([
      'alpha beta gamma',
      'alpha beta gamma',
      expect.stringMatching(/^prompt 3 tok · completion 3 tok · TTFT \d+\.\d\d s · \d+\.\d tok\/s$/),
      '> ',
    ]);

    // Second turn: the history goes with it (the stub counts every message's words as prompt tokens).
    from = terminal.mark();
    terminal.type('delta epsilon\r');
    await terminal.waitFor(/prompt 8 tok · completion 2 tok[^]*> $/, from);
    expect(terminal.linesSince(from).slice(0, 2)).toEqual(['delta epsilon', 'delta epsilon']);

    // A long answer, stopped by Ctrl-C: the client hangs up and the gateway cancels the engine work.
    const words = Array.from({ length: 60 }, (_, index) => `w${index + 1}`).join(' ');
    from = terminal.mark();
    terminal.type(`${words}\r`);
    await terminal.waitFor(/prefilling…/, from);
    from = terminal.mark(); // past the echo of the typed line
    await terminal.waitFor(/w1 w2 w3 /, from);
    expect(slowEngine().activeGenerations).toBe(1);
    terminal.type('\x03');
    await terminal.waitFor(/\(stopped\)[^]*> $/, from);
    expect(await eventually(() => slowEngine().activeGenerations === 0)).toBe(true);
    const answerLine = terminal.linesSince(from).find((line) => line.startsWith('w1 '));
    expect(answerLine).toBeDefined();
    expect(answerLine).not.toContain('w60');

    // Ctrl-C at the prompt ends the chat.
    terminal.type('\x03');
    expect(await terminal.exited).toBe(0);
  });
});
