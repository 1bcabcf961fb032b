import { Observable, type OperatorFunction, type Subscription } from 'rxjs';
import type { EngineEvent } from '../engine/engine-event.js';
import type { LifecycleService } from '../lifecycle/lifecycle.service.js';
import type { GenerationTelemetry } from '../observability/generation-telemetry.js';
import { keepaliveFrames, type KeepaliveSettings } from '../protocols/sse/keepalive-frames.js';
import type { SseFrame } from '../protocols/sse/sse-frame.js';
import type { StreamEvent } from '../streaming/stream-event.js';
import type { ResponseObject, StoredEvent } from './response-store.js';
import { FINAL_EVENTS, finalResponse } from './stored-responses-protocol.js';
import type { StoredResponses } from './stored-responses.js';

/** Tries at the final events when the store fails (100, 200, 400 ms apart). */
const FINAL_ATTEMPTS = 3;

/** One background response to run: its first state (kept already), its accepted generation, its encoder. */
export interface BackgroundRun {
  response: ResponseObject;
  events$: Observable<EngineEvent>;
  encode: OperatorFunction<StreamEvent, SseFrame>;
  telemetry: GenerationTelemetry;
}

/**
 * Runs background responses with nobody connected: the generation's frames (keep-alives
 * included, as a stream would have them) go to the response's event log, batched per turn of the
 * event loop, and its states to the stored response. A cancel asked on any replica stops the
 * engine work here. Each run counts as in flight, so a shutdown drains it like a stream.
 */
export class BackgroundRuns {
  constructor(
    private readonly stored: StoredResponses,
    private readonly lifecycle: LifecycleService,
    private readonly keepalive: KeepaliveSettings,
  ) {}

  /** Starts a run; resolves once its opening events are in the log (a follower can attach). */
  start({ response, events$, encode, telemetry }: BackgroundRun): Promise<void> {
    const id = response.id;
    const leave = this.lifecycle.enter();
    let sequence = 0;
    let pending: StoredEvent[] = [];
    let written: Promise<void> = Promise.resolve();
    let flushScheduled = false;
    let ended = false;
    const finishedItems: unknown[] = [];
    let cancelSubscription: Subscription | undefined;

    // Events the store failed to take: sent again ahead of the next batch (appending is idempotent).
    let unsent: StoredEvent[] = [];
    const flush = (final: boolean) => {
      flushScheduled = false;
      if (pending.length === 0 && !final) return;
      const batch = pending;
      pending = [];
      written = written.then(async () => {
        const events = unsent.length === 0 ? batch : unsent.concat(batch);
        for (let attempt = 0; ; attempt += 1) {
          if (await this.stored.append(id, events, final)) {
            unsent = [];
            return;
          }
          // The last batch has no next one to ride with: a few more tries, then it is left.
          if (!final || attempt >= FINAL_ATTEMPTS) break;
          await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));
        }
        unsent = events;
      });
    };
    const push = (event: string, data: string) => {
      pending.push({ sequence, event, data });
      sequence += 1;
      if (!flushScheduled) {
        flushScheduled = true;
        setImmediate(() => {
          if (!ended) flush(false);
        });
      }
    };
    const end = (final: ResponseObject) => {
      if (ended) return;
      ended = true;
      cancelSubscription?.unsubscribe();
      // The state first, then the last events: a follower that sees the end finds the final state.
      written = written.then(() => this.stored.update(final));
      flush(true);
      void written.finally(leave);
    };

    let started = false;
    const marked$ = new Observable<EngineEvent>((subscriber) =>
      events$.subscribe({
        next: (event) => {
          if (!started) {
            started = true;
            written = written.then(() => this.stored.update({ ...response, status: 'in_progress' }));
          }
          subscriber.next(event);
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      }),
    );
    const frames$ = keepaliveFrames(marked$.pipe(this.lifecycle.endAtDrainDeadline()), encode, this.keepalive, () => telemetry.markHeartbeat());
    const subscription = frames$.subscribe({
      next: (frame) => {
        if (!('event' in frame) || frame.event === undefined) return;
        push(frame.event, frame.data);
        if (frame.event === 'response.output_item.done') finishedItems.push((JSON.parse(frame.data) as { item: unknown }).item);
        if (FINAL_EVENTS.has(frame.event)) end(finalResponse(frame));
      },
      // The encoder turns failures into `response.failed`; a stream that ends without a final event was cut short.
      complete: () => end({ ...response, status: 'failed', output: finishedItems, error: { code: 'server_error', message: 'The generation ended early.' } }),
    });
    cancelSubscription = this.stored.cancelRequests(id).subscribe(() => {
      if (ended) return;
      subscription.unsubscribe();
      const cancelled = { ...response, status: 'cancelled', output: finishedItems, completed_at: Math.floor(Date.now() / 1000) };
      push('response.cancelled', JSON.stringify({ type: 'response.cancelled', sequence_number: sequence, response: cancelled }));
      end(cancelled);
    });
    if (ended) cancelSubscription.unsubscribe();
    // The opening events (`response.created`, `response.in_progress`) were pushed on subscription.
    flush(false);
    return written;
  }
}
