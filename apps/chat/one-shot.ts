import type { GatewayApi, TurnInput } from './gateway-api.js';
import type { GatewayTarget } from './gateway-target.js';
import { runAnswer } from './run-answer.js';

/** Exit codes: the answer ended normally, it failed, the user stopped it (128 + SIGINT). */
const EXIT = { done: 0, error: 1, stopped: 130 } as const;

/**
 * `--prompt TEXT` (or a prompt piped into stdin): the answer text goes to stdout and everything
 * else (reasoning, notes, stats) to stderr, so the output pipes cleanly. Styles and the status line
 * appear only when both are terminals. Ctrl-C stops the answer and exits with 130.
 */
export async function runOneShot(
  target: GatewayTarget,
  api: GatewayApi,
  base: Omit<TurnInput, 'messages'>,
  prompt: string,
): Promise<number> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  try {
    const result = await runAnswer(
      target,
      api,
      { ...base, messages: [{ role: 'user', content: prompt }] },
      {
        answer: process.stdout,
        side: process.stderr,
        ansi: process.stdout.isTTY && process.stderr.isTTY,
        clock: () => performance.now(),
      },
      controller.signal,
    );
    return EXIT[result.outcome];
  } finally {
    process.off('SIGINT', stop);
  }
}

/** The whole of stdin, trimmed: the prompt when none is given and stdin is not a terminal. */
export async function readStdin(): Promise<string> {
  let text = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) text += chunk;
  return text.trim();
}
