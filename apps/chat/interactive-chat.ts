import { createInterface } from 'node:readline';
import { ANSI } from './ansi-style.js';
import { Conversation } from './conversation.js';
import type { GatewayApi, TurnInput } from './gateway-api.js';
import type { GatewayTarget } from './gateway-target.js';
import { runAnswer, type AnswerResult } from './run-answer.js';

const CTRL_C = 0x03;
const PROMPT = ANSI.bold('> ');

/**
 * The terminal chat: read a line, stream the answer, repeat, keeping the conversation. A line
 * editor (readline, with history) runs only at the prompt; while an answer streams, the terminal
 * is in raw mode and the only key that counts is Ctrl-C, which stops that answer. Ctrl-C or
 * Ctrl-D at the prompt ends the chat (exit code 0).
 */
export async function runInteractiveChat(
  target: GatewayTarget,
  api: GatewayApi,
  base: Omit<TurnInput, 'messages'>,
): Promise<number> {
  const conversation = new Conversation();
  const lineHistory: string[] = [];
  const ansi = process.stdout.isTTY;
  const banner = `Gantry chat · ${base.model} · ${api.name} API · ${target.baseUrl} — Ctrl-C stops an answer, Ctrl-C at the prompt exits`;
  process.stdout.write(`${ansi ? ANSI.dim(banner) : banner}\n`);
  for (;;) {
    const line = await askLine(lineHistory);
    if (line === undefined) return 0;
    if (line.trim().length === 0) continue;
    const result = await whileCtrlCStops((signal) =>
      runAnswer(
        target,
        api,
        { ...base, messages: conversation.withUser(line) },
        { answer: process.stdout, side: process.stdout, ansi, clock: () => performance.now() },
        signal,
      ),
    );
    if (result.outcome !== 'error') conversation.record(line, result.text);
  }
}

/** One line from the user, or undefined when they press Ctrl-C or Ctrl-D. */
function askLine(history: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    const editor = createInterface({
      input: process.stdin,
      output: process.stdout,
      terminal: true,
      history: [...history],
      historySize: 200,
    });
    let line: string | undefined;
    editor.on('history', (updated: string[]) => history.splice(0, history.length, ...updated));
    editor.once('line', (text) => {
      line = text;
      editor.close();
    });
    editor.once('SIGINT', () => {
      process.stdout.write('\n');
      editor.close();
    });
    editor.once('close', () => resolve(line));
    editor.setPrompt(PROMPT);
    editor.prompt();
  });
}

/** Runs `work` with Ctrl-C (the key in raw mode, or a SIGINT) aborting its signal. */
async function whileCtrlCStops(work: (signal: AbortSignal) => Promise<AnswerResult>): Promise<AnswerResult> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  const onKeys = (data: Buffer) => {
    if (data.includes(CTRL_C)) stop();
  };
  const stdin = process.stdin;
  stdin.setRawMode?.(true);
  stdin.on('data', onKeys);
  stdin.resume();
  process.on('SIGINT', stop);
  try {
    return await work(controller.signal);
  } finally {
    process.off('SIGINT', stop);
    stdin.off('data', onKeys);
    stdin.pause();
    stdin.setRawMode?.(false);
  }
}
