import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ReceivedRequest } from './mock-upstream.js';
import { planAnswer } from './mock-answer.js';
import { DEFAULT_BEHAVIOUR } from './mock-behaviour.js';
import { mockError, sendJson } from './mock-chat-json.js';

/** `x-mock-tokenize: absent` answers 404 as a server without the endpoint (TGI, Ollama) would. */
export const TOKENIZE_HEADER = 'x-mock-tokenize';
/** `x-mock-tokenize-delay-ms: N` answers after N ms: a slow tokenizer. */
export const TOKENIZE_DELAY_HEADER = 'x-mock-tokenize-delay-ms';

export const MOCK_MAX_MODEL_LEN = 32_768;

export interface TokenizeContext {
  /** When set, another model gets vLLM's 404. */
  servedModel?: string;
  /** Where received requests are kept (the chat requests' list), and how many at most. */
  received: ReceivedRequest[];
  recordLimit: number;
}

/**
 * vLLM's `POST /tokenize` for chat messages: `{count, max_model_len, tokens}`, where `count` is
 * the prompt tokens the chat endpoint would report for the same messages (the mock counts words).
 */
export async function answerTokenize(
  request: IncomingMessage,
  response: ServerResponse,
  context: TokenizeContext,
): Promise<void> {
  const closed = new AbortController();
  response.once('close', () => closed.abort());
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(await readText(request)) as Record<string, unknown>;
  } catch (error) {
    return sendJson(response, 400, mockError(400, (error as Error).message));
  }
  context.received.push({ path: request.url ?? '', headers: request.headers, body });
  if (context.received.length > context.recordLimit) context.received.shift();
  if (request.headers[TOKENIZE_HEADER] === 'absent') return sendJson(response, 404, { detail: 'Not Found' });
  const delayMs = Number(request.headers[TOKENIZE_DELAY_HEADER] ?? 0);
  if (delayMs > 0) {
    try {
      await sleep(delayMs, undefined, { signal: closed.signal });
    } catch {
      return;
    }
  }
  if (context.servedModel !== undefined && body.model !== undefined && body.model !== context.servedModel) {
    return sendJson(
      response,
      404,
      mockError(
        404,
        `The model \`${typeof body.model === 'string' ? body.model : JSON.stringify(body.model)}\` does not exist.`,
      ),
    );
  }
  if (!Array.isArray(body.messages)) return sendJson(response, 400, mockError(400, 'messages must be a list.'));
  const count = planAnswer(body, DEFAULT_BEHAVIOUR, 'count').promptTokens;
  sendJson(response, 200, {
    count,
    max_model_len: MOCK_MAX_MODEL_LEN,
    tokens: Array.from({ length: count }, (_, index) => index),
  });
}

async function readText(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
