import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import { newId, unixSeconds } from '../protocols/ids.js';
import { toResponseBody } from '../protocols/openai-responses/response-body.js';
import { responseEnvelope, type ResponseEnvelope } from '../protocols/openai-responses/response-object.js';
import { RESPONSES_PROTOCOL } from '../protocols/openai-responses/responses-protocol.js';
import type { ResponsesRequestDto } from '../protocols/openai-responses/responses-request.dto.js';
import type { ProtocolDescriptor } from '../protocols/protocol-descriptor.js';
import type { SseFrame } from '../protocols/sse/sse-frame.js';
import type { ResponseObject } from './response-store.js';
import type { PreparedResponse, StoredResponses } from './stored-responses.js';

/** The events that end a Responses stream, each carrying the final Response object. */
export const FINAL_EVENTS: ReadonlySet<string> = new Set([
  'response.completed',
  'response.incomplete',
  'response.failed',
  'response.cancelled',
]);

/**
 * The Responses protocol for one request whose stored state was read (`prepared`): it decodes the
 * body with the stored conversation in it, echoes how the response is kept, and keeps the final
 * response before its last frame (or its body) leaves, so that a `previous_response_id` sent the
 * moment the client has the answer finds it, on any replica.
 */
export function storedResponsesProtocol(
  prepared: PreparedResponse,
  stored: Pick<StoredResponses, 'keep'>,
): ProtocolDescriptor<ResponsesRequestDto, ResponseEnvelope> {
  const keep = (response: ResponseObject) => stored.keep(prepared, response);
  return {
    ...RESPONSES_PROTOCOL,
    decode: (_body, settings) => RESPONSES_PROTOCOL.decode(prepared.body, settings),
    identify: (body, { reasoningCipher }) =>
      responseEnvelope(newId('resp_'), unixSeconds(), body, reasoningCipher, prepared.keeping),
    toBody: (result, envelope) => {
      const body = toResponseBody(result, envelope);
      return prepared.keeping.store ? keep(body as ResponseObject).then(() => body) : body;
    },
    encode: (body, envelope, promptTokens) => {
      const encode = RESPONSES_PROTOCOL.encode(body, envelope, promptTokens);
      return prepared.keeping.store ? (events$) => encode(events$).pipe(keptBeforeFinal(keep)) : encode;
    },
  };
}

/** The final frame's Response object (its `response` field). */
export function finalResponse(frame: { data: string }): ResponseObject {
  return (JSON.parse(frame.data) as { response: ResponseObject }).response;
}

/**
 * Frames as they come, but the final one waits until `keep` has kept its response (`keep` never
 * rejects). The frames made in the same turn as the final one (the items' `.done` events) wait
 * with it, so the stream's end still leaves in one write (see SseWriter: a burst is not a backlog):
 * from a `.done` event on, frames are held until the end of the turn.
 */
export function keptBeforeFinal(keep: (response: ResponseObject) => Promise<void>): MonoTypeOperatorFunction<SseFrame> {
  return (frames$) =>
    new Observable<SseFrame>((subscriber) => {
      let held: SseFrame[] = [];
      let releaseQueued = false;
      let keeping: Promise<void> | undefined;
      const release = () => {
        releaseQueued = false;
        const frames = held;
        held = [];
        for (const frame of frames) subscriber.next(frame);
      };
      const releaseUnlessKeeping = () => {
        if (keeping === undefined) release();
      };
      const subscription = frames$.subscribe({
        next: (frame) => {
          const event = 'event' in frame ? frame.event : undefined;
          const final = event !== undefined && FINAL_EVENTS.has(event);
          // Deltas, the bulk of a stream, pass straight on; a `.done` (an item closing, maybe the
          // end's burst) and whatever follows it wait for the turn's end.
          if (
            held.length === 0 &&
            keeping === undefined &&
            !final &&
            (event === undefined || !event.endsWith('.done'))
          ) {
            subscriber.next(frame);
            return;
          }
          held.push(frame);
          if (final && keeping === undefined) {
            keeping = keep(finalResponse(frame as { data: string })).then(release);
          } else if (!releaseQueued && keeping === undefined) {
            releaseQueued = true;
            queueMicrotask(releaseUnlessKeeping);
          }
        },
        error: (error: unknown) => {
          release();
          subscriber.error(error);
        },
        complete: () => {
          if (keeping !== undefined) {
            void keeping.then(() => subscriber.complete());
            return;
          }
          release();
          subscriber.complete();
        },
      });
      return () => subscription.unsubscribe();
    });
}
