import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MockAnswer, MockReplyContext, MockStep } from './mock-answer.js';
import { failurePoint, type MockBehaviour } from './mock-behaviour.js';
import { mockLogprobs } from './mock-logprobs.js';

export interface MockStreamContext extends MockReplyContext {
  includeUsage: boolean;
  /** vLLM's continuous_usage_stats: usage on every chunk (only together with include_usage). */
  continuousUsage: boolean;
}

/**
 * Writes an answer in vLLM's streaming wire format: silence during prefill,
 * the role chunk (`content: ""`), one chunk per step, a finish chunk (`content: ""`, the finish
 * reason and `stop_reason`), the `choices: []` usage chunk when asked for, `data: [DONE]`.
 * Failures are injected where the behaviour says. Resolves when done or when the client left.
 */
export async function streamAnswer(context: MockStreamContext): Promise<void> {
  const { response, answer, behaviour, signal } = context;
  const object = context.completion ? 'text_completion' : 'chat.completion.chunk';
  const prefix = `{"id":"${context.id}","object":"${object}","created":${context.created},"model":${JSON.stringify(context.model)},"choices":`;
  let completionTokens = 0;
  const usage = () => ({
    prompt_tokens: answer.promptTokens,
    total_tokens: answer.promptTokens + completionTokens,
    completion_tokens: completionTokens,
    ...(answer.reasoningTokens > 0
      ? { completion_tokens_details: { reasoning_tokens: Math.min(answer.reasoningTokens, completionTokens) } }
      : {}),
  });
  const write = async (text: string) => {
    if (!response.write(text)) await waitForDrain(response, signal);
  };
  const chunk = (choice: string) =>
    write(`data: ${prefix}[${choice}]${context.continuousUsage ? `,"usage":${JSON.stringify(usage())}` : ''}}\n\n`);

  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  response.flushHeaders();
  await context.scheduled?.();
  await sleep(behaviour.prefillMs, undefined, { signal });
  context.onDecoding();
  if (!context.completion)
    await chunk('{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}');
  // A completion's choice has its text where a chat chunk has its delta.
  const piece = (delta: Record<string, unknown>) =>
    context.completion ? `"text":${JSON.stringify(delta.content ?? '')}` : `"delta":${JSON.stringify(delta)}`;

  const failAt = failurePoint(behaviour, answer.offset);
  // No think block was closed: the R1 parser files every content step as reasoning.
  const unclosedThink =
    behaviour.reasoningParser === 'deepseek_r1' && !answer.steps.some((step) => step.kind === 'reasoning');
  const started = performance.now();
  let offset = 0;
  for (const [position, step] of answer.steps.entries()) {
    if (position === failAt) return injectFailure(context, write);
    if (position > 0 && behaviour.tokenIntervalMs > 0) {
      // Paced against the start, so that timer drift does not add up.
      await sleep(Math.max(0, started + position * behaviour.tokenIntervalMs - performance.now()), undefined, {
        signal,
      });
    } else if (position > 0 && position % behaviour.chunksPerWrite === 0) {
      // Node sends what one tick wrote as one write: a yield ends the burst.
      await (behaviour.chunksPerWrite === 1 ? nextTurn() : sleep(0, undefined, { signal }));
    }
    completionTokens += 1;
    const filed: MockStep = unclosedThink && step.kind === 'content' ? { kind: 'reasoning', text: step.text } : step;
    const stepText = filed.kind === 'content' ? filed.text : '';
    const logprobs = mockLogprobs(stepText, position, offset, context.logprobs);
    offset += stepText.length;
    await chunk(
      `{"index":0,${piece(deltaOf(filed, behaviour))},"logprobs":${JSON.stringify(logprobs ?? null)},"finish_reason":null}`,
    );
  }
  if (failAt !== undefined && failAt >= answer.steps.length) return injectFailure(context, write);
  await chunk(
    `{"index":0,${piece({ content: '' })},"logprobs":null,"finish_reason":"${answer.finishReason}","stop_reason":${JSON.stringify(answer.stopReason)}}`,
  );
  // As vLLM: the cached prompt tokens ride only the final usage, not the continuous one.
  if (context.includeUsage)
    await write(`data: ${prefix}[],"usage":${JSON.stringify({ ...usage(), ...cachedUsage(answer) })}}\n\n`);
  response.end('data: [DONE]\n\n');
}

/** vLLM's `prompt_tokens_details`, when the mock keeps a prefix cache. */
export function cachedUsage(answer: MockAnswer): { prompt_tokens_details?: { cached_tokens: number } } {
  return answer.cachedTokens === undefined ? {} : { prompt_tokens_details: { cached_tokens: answer.cachedTokens } };
}

function deltaOf(step: MockStep, behaviour: MockBehaviour): Record<string, unknown> {
  switch (step.kind) {
    case 'reasoning':
      return { [behaviour.reasoningField]: step.text };
    case 'content':
      return { content: step.text };
    case 'tool':
      return {
        tool_calls: [
          step.name === undefined
            ? { index: step.index, function: { arguments: step.arguments } }
            : {
                index: step.index,
                id: step.id,
                type: 'function',
                function: { name: step.name, arguments: step.arguments },
              },
        ],
      };
  }
}

async function injectFailure(context: MockStreamContext, write: (text: string) => Promise<void>): Promise<void> {
  const { response, behaviour, signal } = context;
  switch (behaviour.failure) {
    case 'drop':
      // Let what was written reach the wire first, as when a real server process dies.
      await sleep(10, undefined, { signal });
      response.socket?.destroy();
      return;
    case 'malformed':
      await write('data: {"id":"chatcmpl-broken","choices":[{"index":0,"delta":{"content":\n\n');
      response.end('data: [DONE]\n\n');
      return;
    case 'stall':
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      return;
    case 'drip':
      // Bytes without output: an SSE comment every 100 ms until the client leaves.
      while (!signal.aborted) {
        await write(': ping\n\n');
        await sleep(100, undefined, { signal }).catch(() => undefined);
      }
      return;
    case 'error': {
      const error = {
        message: context.failureMessage,
        type: 'InternalServerError',
        param: null,
        code: behaviour.failureStatus,
      };
      await write(`data: ${JSON.stringify({ error })}\n\n`);
      response.end('data: [DONE]\n\n');
      return;
    }
  }
}

/** The next turn of the event loop (`setImmediate`): sooner than any timer. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function waitForDrain(response: ServerResponse, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    response.on('drain', done);
    signal.addEventListener('abort', done, { once: true });
  });
}
