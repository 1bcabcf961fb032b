import type { BenchTarget } from './bench-stack.js';
import { postChat, streamChat } from './chat-client.js';
import { MeasureWindow, runClosedLoop } from './closed-loop.js';
import { promptOfWords } from './gateway-configs.js';
import { cpuSnapshot, type Tally } from './load-tally.js';
import { callFor, plan, tallyOf, type LoadTiming } from './streaming-load.js';

/** The same target on another route of its OpenAI-style base (`/v1/embeddings`, `/v1/completions`). */
function onRoute(target: BenchTarget, route: string): BenchTarget {
  return { ...target, chatUrl: new URL(target.chatUrl.toString().replace(/chat\/completions$/, route)) };
}

/**
 * Embeddings, non-streaming, as a RAG pipeline's indexer sends them: `inputs` texts of 16 words
 * each per request, on the SDKs' default base64 encoding, from `concurrency` clients in a closed
 * loop. A request is done when its 200 body with `data` arrived whole.
 */
export async function embeddingsRound(
  target: BenchTarget,
  concurrency: number,
  inputs: number,
  timing: LoadTiming,
): Promise<Tally> {
  const body = JSON.stringify({
    model: target.model,
    input: Array.from({ length: inputs }, (_, index) => `${index} ${promptOfWords(15)}`),
    encoding_format: 'base64',
  });
  const { call, close } = callFor(onRoute(target, 'embeddings'), concurrency, body);
  const run = await runClosedLoop(
    plan(concurrency, timing),
    () => postChat(call, '"data"'),
    () => cpuSnapshot(target),
  );
  close();
  return tallyOf(run, run.completedInWindow, 0);
}

/**
 * Completions streamed as editors' autocomplete asks for them: a prompt of `tokens` words (the
 * mock and the stub echo it), usage included. Counts the `text_completion` chunks and those with
 * text in the window, as the chat throughput scenario counts chunks and tokens.
 */
export async function completionsRound(
  target: BenchTarget,
  streams: number,
  tokens: number,
  timing: LoadTiming,
): Promise<Tally> {
  const window = new MeasureWindow();
  let chunks = 0;
  let textChunks = 0;
  const body = JSON.stringify({
    model: target.model,
    prompt: promptOfWords(tokens),
    max_tokens: tokens,
    stream: true,
    stream_options: { include_usage: true },
  });
  const { call, close } = callFor(onRoute(target, 'completions'), streams, body);
  const run = await runClosedLoop(
    plan(streams, timing),
    () =>
      streamChat(call, {
        onFrame: (kind, at, data) => {
          if (kind === 'done' || !window.contains(at)) return;
          chunks += 1;
          if (data.includes('"text":"') && !data.includes('"text":""')) textChunks += 1;
        },
      }),
    () => cpuSnapshot(target),
    window,
  );
  close();
  return tallyOf(run, chunks, textChunks);
}
