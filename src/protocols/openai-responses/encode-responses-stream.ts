import { Observable, type OperatorFunction } from 'rxjs';
import { openOnFirstEvent } from '../../streaming/open-on-first-event.js';
import type { StreamEvent } from '../../streaming/stream-event.js';
import { newId } from '../ids.js';
import type { SseFrame } from '../sse/sse-frame.js';
import type { ResponseEnvelope } from './response-object.js';
import { ResponsesStreamWriter } from './responses-stream-writer.js';

/**
 * Engine events (and heartbeats) to Responses stream events, numbered by `sequence_number` from 0
 * with no gaps.
 *
 * `response.created` and `response.in_progress` leave with the first stream event (the engine's
 * acceptance, a heartbeat, or whatever comes first; see openOnFirstEvent); each heartbeat is another
 * full `response.in_progress` (same id, empty output) before the first output item, and the API's
 * `keepalive` event after it (a continuation's prefill): openai-node replaces its snapshot on every
 * lifecycle event, and knows `keepalive` as carrying no state; Codex and the AI SDK ignore both. Items open and close as the
 * output kind changes, with every `.done` event; the stream ends with `response.completed`,
 * `response.incomplete` (length) or `response.failed`, and no `[DONE]`.
 *
 * Reasoning streams as `reasoning_text`, and also as summary events when the request set
 * `reasoning.summary`. Tool calls come out under the client's names: a namespaced function's
 * call carries its `namespace`; a custom tool's call is a `custom_tool_call`, whose input (taken
 * out of the model's arguments) is sent in one delta when the call is whole.
 */
export function encodeResponsesStream(
  envelope: ResponseEnvelope,
  newItemId: (prefix: string) => string = newId,
): OperatorFunction<StreamEvent, SseFrame> {
  return (source) =>
    new Observable<SseFrame>((subscriber) => {
      const writer = new ResponsesStreamWriter(envelope, newItemId, (frame) => subscriber.next(frame));
      return source.subscribe(
        openOnFirstEvent(() => writer.start(), {
          next: (event) => writer.write(event),
          error: (error: unknown) => {
            writer.fail(error);
            subscriber.complete();
          },
          complete: () => subscriber.complete(),
        }),
      );
    });
}
