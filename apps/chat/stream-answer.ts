import type { ClientEvent } from './client-event.js';
import type { GatewayApi, TurnInput } from './gateway-api.js';
import { authHeaders, type GatewayTarget } from './gateway-target.js';
import { SseEventReader } from './sse-event-reader.js';
import { errorMessageOf, parseWireJson } from './wire-json.js';

/**
 * Sends one turn and yields the answer's client events as they arrive. Always ends with one `done`
 * or `error` event: a refused request (non-2xx) and a stream cut before its end become `error`.
 * Aborting `signal` closes the connection (the gateway then cancels the engine work) and makes the
 * iteration throw the abort error.
 */
export async function* streamAnswer(
  target: GatewayTarget,
  api: GatewayApi,
  input: TurnInput,
  signal: AbortSignal,
): AsyncGenerator<ClientEvent> {
  const request = api.buildRequest(input);
  const response = await fetch(target.baseUrl + request.path, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      ...authHeaders(target),
      ...request.headers,
    },
    body: JSON.stringify(request.body),
    signal,
  });
  if (!response.ok) {
    yield { type: 'error', message: await refusalMessage(response) };
    return;
  }
  if (!response.body) {
    yield { type: 'error', message: 'the gateway answered with an empty body' };
    return;
  }

  const reader = new SseEventReader(api.createDecoder());
  const decoder = new TextDecoder();
  for await (const chunk of response.body) {
    for (const event of reader.feed(decoder.decode(chunk as Uint8Array, { stream: true }))) {
      yield event;
      if (isTerminal(event)) return;
    }
  }
  for (const event of reader.end()) {
    yield event;
    if (isTerminal(event)) return;
  }
  yield { type: 'error', message: 'the stream ended before the answer was complete' };
}

/** The first `done` or `error` ends the answer; anything after it (chat's `[DONE]` after an error) is not read. */
function isTerminal(event: ClientEvent): boolean {
  return event.type === 'done' || event.type === 'error';
}

async function refusalMessage(response: Response): Promise<string> {
  const text = await response.text().catch(() => '');
  const detail = errorMessageOf(parseWireJson<{ error: unknown; message: unknown }>(text)) ?? text.trim().slice(0, 200);
  return `HTTP ${response.status}${detail ? `: ${detail}` : ''}`;
}
