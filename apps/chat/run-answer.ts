import { AnswerRenderer, type RendererOptions } from './answer-renderer.js';
import type { GatewayApi, TurnInput } from './gateway-api.js';
import type { GatewayTarget } from './gateway-target.js';
import { streamAnswer } from './stream-answer.js';

/** How often the status line's spinner and clock move while the client waits. */
const STATUS_REFRESH_MS = 100;

export interface AnswerResult {
  /** `done`: the answer ended normally; `stopped`: the user aborted it; `error`: it failed. */
  outcome: 'done' | 'stopped' | 'error';
  /** The answer's text, as far as it came. */
  text: string;
}

/**
 * Asks one question and draws the answer as it streams. Aborting `signal` (Ctrl-C) stops the
 * answer: the HTTP request is aborted, so the gateway cancels the engine work.
 */
export async function runAnswer(
  target: GatewayTarget,
  api: GatewayApi,
  input: TurnInput,
  render: RendererOptions,
  signal: AbortSignal,
): Promise<AnswerResult> {
  const renderer = new AnswerRenderer(render);
  const ticker = render.ansi ? setInterval(() => renderer.tick(), STATUS_REFRESH_MS) : undefined;
  let text = '';
  let outcome: AnswerResult['outcome'] = 'error';
  try {
    for await (const event of streamAnswer(target, api, input, signal)) {
      if (event.type === 'text') text += event.text;
      if (event.type === 'done') outcome = 'done';
      renderer.handle(event);
    }
  } catch (error) {
    if (signal.aborted) {
      outcome = 'stopped';
    } else {
      renderer.handle({ type: 'error', message: describeFailure(error, target.baseUrl) });
    }
  } finally {
    clearInterval(ticker);
  }
  renderer.end(outcome === 'stopped');
  return { outcome, text };
}

/** fetch's errors say "fetch failed"; the cause says why (ECONNREFUSED, ...). */
function describeFailure(error: unknown, baseUrl: string): string {
  const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  if (cause?.code === 'ECONNREFUSED') return `cannot reach the gateway at ${baseUrl} (connection refused)`;
  const message = cause?.message ?? (error instanceof Error ? error.message : String(error));
  return `request to ${baseUrl} failed: ${message}`;
}
