import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MockReplyContext } from './mock-answer.js';
import { failurePoint } from './mock-behaviour.js';
import { cachedUsage } from './mock-chat-stream.js';
import { mockLogprobs } from './mock-logprobs.js';

/** A non-streaming `chat.completion`, after the time the stream would have taken; failures injected. */
export async function answerJson(context: MockReplyContext): Promise<void> {
  const { response, answer, behaviour, signal } = context;
  await sleep(behaviour.prefillMs, undefined, { signal });
  context.onDecoding();
  await sleep(behaviour.tokenIntervalMs * Math.max(0, answer.steps.length - 1), undefined, { signal });
  switch (failurePoint(behaviour, answer.offset) === undefined ? undefined : behaviour.failure) {
    case 'drop':
      response.socket?.destroy();
      return;
    case 'stall':
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      return;
    case 'malformed':
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"id": "chatcmpl-broken", "choices": [');
      return;
    case 'error':
      sendJson(response, behaviour.failureStatus, mockError(behaviour.failureStatus, context.failureMessage));
      return;
  }

  const join = (kind: 'reasoning' | 'content') =>
    answer.steps.flatMap((step) => (step.kind === kind ? [step.text] : [])).join('');
  const calls = answer.steps.flatMap((step) => (step.kind === 'tool' ? [step] : []));
  const toolCalls =
    calls.length === 0
      ? undefined
      : [
          {
            id: calls[0].id,
            type: 'function',
            function: { name: calls[0].name, arguments: calls.map((call) => call.arguments).join('') },
          },
        ];
  const completionTokens = answer.steps.length;
  const usage = {
    prompt_tokens: answer.promptTokens,
    total_tokens: answer.promptTokens + completionTokens,
    completion_tokens: completionTokens,
    ...cachedUsage(answer),
  };
  if (context.completion) {
    const choice = {
      index: 0,
      text: join('content'),
      logprobs: joinedMockLogprobs(answer.steps, context.logprobs),
      finish_reason: answer.finishReason,
    };
    const created = context.created;
    return sendJson(response, 200, {
      id: context.id,
      object: 'text_completion',
      created,
      model: context.model,
      choices: [choice],
      usage,
    });
  }
  sendJson(response, 200, {
    id: context.id,
    object: 'chat.completion',
    created: context.created,
    model: context.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: toolCalls ? null : join('content'),
          ...(answer.reasoningTokens > 0 ? { [behaviour.reasoningField]: join('reasoning') } : {}),
          ...(toolCalls ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: answer.finishReason,
        stop_reason: answer.stopReason,
      },
    ],
    usage,
  });
}

/** vLLM's error body: OpenAI's `{error: {message, type, param, code}}`, with `code` the HTTP status as an integer. */
export function mockError(status: number, message = 'The mock upstream was told to fail.') {
  const type = status === 404 ? 'NotFoundError' : status < 500 ? 'BadRequestError' : 'InternalServerError';
  return { error: { message, type, param: null, code: status } };
}

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response
    .writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
    .end(text);
}

/** A whole answer's logprobs: each content step's, joined (null when not asked). */
function joinedMockLogprobs(steps: MockReplyContext['answer']['steps'], top: number | undefined) {
  if (top === undefined) return null;
  const joined = {
    tokens: [] as string[],
    token_logprobs: [] as number[],
    top_logprobs: [] as unknown[],
    text_offset: [] as number[],
  };
  let offset = 0;
  for (const [position, step] of steps.entries()) {
    if (step.kind !== 'content') continue;
    const piece = mockLogprobs(step.text, position, offset, top)!;
    offset += step.text.length;
    joined.tokens.push(...piece.tokens);
    joined.token_logprobs.push(...piece.token_logprobs);
    joined.top_logprobs.push(...piece.top_logprobs);
    joined.text_offset.push(...piece.text_offset);
  }
  return joined;
}
