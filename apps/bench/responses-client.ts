import { exchange, type ChatCall, type RequestHandle } from './chat-client.js';
import { promptOfWords } from './gateway-configs.js';
import { SseReader } from './sse-reader.js';

/** The Responses event that carries one token of output text: what this scenario counts as a chunk. */
export const TEXT_DELTA_EVENT = 'response.output_text.delta';

/** Events that end a Responses stream with a whole answer, and those that end it with none. */
const WHOLE = new Set(['response.completed', 'response.incomplete']);
const BROKEN = new Set(['response.failed', 'response.cancelled', 'error']);

/** How the client asks for a response: kept or not, followed live or run in the background. */
export type StoreMode = 'off' | 'on' | 'background';

/**
 * A `POST /v1/responses` streaming body whose answer is `tokens` text deltas on the mock and the
 * stub (they echo the input word by word). `off` sends `store: false`; `on` the API's default,
 * `store: true`; `background` also `background: true` (the client follows the event log).
 */
export function responsesBody(model: string, tokens: number, mode: StoreMode): string {
  return JSON.stringify({
    model,
    input: promptOfWords(tokens),
    max_output_tokens: tokens,
    stream: true,
    store: mode !== 'off',
    ...(mode === 'background' ? { background: true } : {}),
  });
}

export interface ResponsesStreamHandlers {
  /** A text delta arrived; `at` is performance.now() when its bytes were read. */
  onDelta?(at: number): void;
  /** The response's id, from its `response.created` event. */
  onId?(id: string): void;
}

const RESPONSE_ID = /"id":"(resp_[^"]+)"/;

/**
 * POSTs a streaming Responses request (`call.url` is `/v1/responses`) and reads its SSE answer,
 * telling events apart by their `event:` name without parsing their JSON. Completed when the
 * stream ends after `response.completed` (or `.incomplete`); failed on `response.failed`, an
 * `error` event, or an end without a final event.
 */
export function streamResponses(call: ChatCall, handlers: ResponsesStreamHandlers = {}): RequestHandle {
  return exchange(call, (response, settle) => {
    let at = 0;
    let whole = false;
    let broken: string | undefined;
    const reader = new SseReader(({ event, data }) => {
      if (event === TEXT_DELTA_EVENT) handlers.onDelta?.(at);
      else if (WHOLE.has(event)) whole = true;
      else if (BROKEN.has(event)) broken = `in-band ${event}`;
      else if (event === 'response.created' && handlers.onId) {
        const id = RESPONSE_ID.exec(data)?.[1];
        if (id !== undefined) handlers.onId(id);
      }
    });
    response.setEncoding('utf8');
    response.on('data', (text: string) => {
      at = performance.now();
      reader.feed(text);
    });
    response.on('end', () => {
      if (broken !== undefined) settle({ kind: 'failed', at: performance.now(), reason: broken });
      else if (!whole) settle({ kind: 'failed', at: performance.now(), reason: 'stream ended without a final event' });
      else settle({ kind: 'completed', at: performance.now() });
    });
  });
}
