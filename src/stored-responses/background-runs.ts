import { Observable, startWith, type OperatorFunction, type Subscription } from 'rxjs';
import { ACCEPTED, type EngineEvent } from '../engine/engine-event.js';
import type { LifecycleService } from '../lifecycle/lifecycle.service.js';
import type { GenerationTelemetry } from '../observability/generation-telemetry.js';
import { keepaliveFrames, type KeepaliveSettings } from '../protocols/sse/keepalive-frames.js';
import type { SseFrame } from '../protocols/sse/sse-frame.js';
import type { StreamEvent } from '../streaming/stream-event.js';
import type { ResponseScope } from './response-scope.js';
import { RUNNING_STATUSES, type ResponseObject, type StoredEvent } from './response-store.js';
import { FINAL_EVENTS, finalResponse } from './stored-responses-protocol.js';
import { RunReport } from './run-report.js';
import type { StoredResponses } from './stored-responses.js';

/** One background response to run: its first state (kept already), its accepted generation, its encoder. */
export interface BackgroundRun {
  response: ResponseObject;
  events$: Observable<EngineEvent>;
  encode: OperatorFunction<StreamEvent, SseFrame>;
  telemetry: GenerationTelemetry;
  /** Whose response it is. */
  scope: ResponseScope;
  /** Called once when the run has ended and its last state is written (it gives back the API key's stream slot). */
  onEnd?: () => void;
}

/** A run as it started. */
export interface StartedRun {
  /** Settles once the opening events are in the log: a follower can attach. */
  opened: Promise<void>;
  /**
   * The run's engine events as they pass, for the request's GenerationHooks (metrics, traces, logs
   * see a background request end when its run does). Kept from the start until subscribed.
   */
  events$: Observable<EngineEvent>;
}

/** Tries at the final writes when the store fails (100, 200, 400 ms apart). */
const FINAL_ATTEMPTS = 3;

/**
 * Runs background responses with nobody connected: the generation's frames (keep-alives
 * included, as a stream would have them) go to the response's event log, batched per turn of the
 * event loop, and its states to the stored response. A cancel asked on any replica stops the
 * engine work here. Each run counts as in flight, so a shutdown drains it like a stream, and
 * renews its lease (see StoredResponses) so that other replicas can tell a run whose replica died.
 */
export class BackgroundRuns {
  constructor(
    private readonly stored: StoredResponses,
    private readonly lifecycle: LifecycleService,
    private readonly keepalive: KeepaliveSettings,
  ) {}

  start(run: BackgroundRun): StartedRun {
    return new RunningResponse(run, this.stored, this.lifecycle, this.keepalive).start();
  }
}

/** One background response while it runs. */
class RunningResponse {
  private readonly id: string;
  private readonly exit: () => void;
  private sequence = 0;
  private pending: StoredEvent[] = [];
  /** Events the store failed to take: sent again ahead of the next batch (appending is idempotent). */
  private unsent: StoredEvent[] = [];
  /** The store writes, one after the other. */
  private written: Promise<void> = Promise.resolve();
  private flushScheduled = false;
  private ended = false;
  /** The state kept now (its lease renewed as it runs). */
  private state: ResponseObject;
  private readonly finishedItems: unknown[] = [];
  private frames?: Subscription;
  private cancels?: Subscription;
  private stopWatching?: () => void;
  private renewal?: NodeJS.Timeout;
  private readonly reporting = new RunReport();

  constructor(
    private readonly run: BackgroundRun,
    private readonly stored: StoredResponses,
    private readonly lifecycle: LifecycleService,
    private readonly keepalive: KeepaliveSettings,
  ) {
    this.id = run.response.id;
    this.state = run.response;
    this.exit = lifecycle.enter();
  }

  start(): StartedRun {
    const { telemetry, scope, encode } = this.run;
    // `in_progress` once admitted (a slot is free and the engine starts): pollers see the queue end.
    this.stopWatching = telemetry.onSignal((signal) => {
      if (signal !== 'admitted') return;
      this.stopWatching?.();
      this.state = { ...this.state, status: 'in_progress' };
      this.write(() => this.renew());
    });
    this.renewal = setInterval(() => this.write(() => this.renew()), this.stored.renewalMs);
    this.renewal.unref();

    // The log opens at once, queued or not: the client was answered already, there is no status
    // left to give (a stream's head waits for the engine to accept, see StreamResponder.sse).
    const events$ = this.reporting.tap(this.run.events$).pipe(this.lifecycle.endAtDrainDeadline(), startWith(ACCEPTED));
    const frames$ = keepaliveFrames(events$, encode, this.keepalive, () => telemetry.markHeartbeat());
    this.frames = frames$.subscribe({
      next: (frame) => this.onFrame(frame),
      // The encoder turns failures into `response.failed`; a stream that ends without a final event
      // was cut short, and an error past the encoder is the gateway's own.
      error: () => this.end(this.cutShort()),
      complete: () => this.end(this.cutShort()),
    });
    this.cancels = this.stored.cancelRequests(scope, this.id).subscribe(() => this.cancel());
    if (this.ended) this.cancels.unsubscribe();
    // The opening events (`response.created`, `response.in_progress`) were pushed on subscription.
    // An empty batch opens the log, so that a follower can attach before the first event.
    this.write(() => this.append(this.pending.splice(0), false));
    return { opened: this.written, events$: this.reporting.events$ };
  }

  private onFrame(frame: SseFrame): void {
    if (!('event' in frame) || frame.event === undefined) return;
    if (frame.event === 'response.output_item.done')
      this.finishedItems.push((JSON.parse(frame.data) as { item: unknown }).item);
    if (FINAL_EVENTS.has(frame.event)) this.end(finalResponse(frame), { event: frame.event, data: frame.data });
    else this.push(frame.event, frame.data);
  }

  private cancel(): void {
    if (this.ended) return;
    this.frames?.unsubscribe();
    this.reporting.end();
    const cancelled = {
      ...this.state,
      status: 'cancelled',
      output: this.finishedItems,
      completed_at: Math.floor(Date.now() / 1000),
    };
    this.end(cancelled, closingEvent(cancelled, this.sequence));
  }

  /** Writes the running state again with a new lease; one refused was ended elsewhere (see superseded). */
  private async renew(): Promise<void> {
    if (this.ended) return;
    if ((await this.stored.update(this.run.scope, this.state, true)) === 'refused') this.superseded();
  }

  /**
   * The response was ended while this run could not write (read as left during a partition, or
   * cancelled by another replica that waited for this one in vain): that end stands, so the run
   * stops, and its log closes with it.
   */
  private superseded(): void {
    if (this.ended) return;
    this.frames?.unsubscribe();
    this.end(undefined);
  }

  private push(event: string, data: string, scheduleFlush = true): void {
    this.pending.push({ sequence: this.sequence, event, data });
    this.sequence += 1;
    if (this.flushScheduled || !scheduleFlush) return;
    this.flushScheduled = true;
    setImmediate(() => {
      if (!this.ended) this.flush();
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.write(() => this.append(batch, false));
  }

  /** Appends `batch` behind the events the store failed to take before; the `final` one, the last, gets a few more tries. */
  private async append(batch: StoredEvent[], final: boolean): Promise<void> {
    const events = this.unsent.length === 0 ? batch : this.unsent.concat(batch);
    this.unsent = (await this.retried(() => this.stored.append(this.run.scope, this.id, events, final), final))
      ? []
      : events;
  }

  /**
   * Ends the run: writes `final` (undefined: the kept end stands), then the last events, closed by
   * the event of the end that stands: `closing` as the encoder made it, or one made of the state
   * kept when the store refused `final` (a final state is never replaced).
   */
  private end(final: ResponseObject | undefined, closing?: { event: string; data: string }): void {
    if (this.ended) return;
    this.ended = true;
    this.reporting.end();
    this.stopWatching?.();
    this.cancels?.unsubscribe();
    clearInterval(this.renewal);
    if (final !== undefined) this.state = final;
    this.write(async () => {
      // The state first, then the last events: a follower that sees the end finds the final state.
      const standing = final === undefined ? await this.keptEnd() : await this.keepFinal(final);
      const last = standing !== undefined && standing !== final ? closingEvent(standing, this.sequence) : closing;
      if (last !== undefined) this.push(last.event, last.data, false);
      const batch = this.pending;
      this.pending = [];
      await this.append(batch, true);
    });
    void this.written.finally(() => {
      this.exit();
      this.run.onEnd?.();
    });
  }

  /**
   * Writes the final state (a few tries); the state that stands: `final`, the end kept before it,
   * or, for a response larger than the store holds, a failed one that says so.
   */
  private async keepFinal(final: ResponseObject, shrunk = false): Promise<ResponseObject | undefined> {
    for (let tries = 0; ; tries += 1) {
      const outcome = await this.stored.update(this.run.scope, final, false);
      if (outcome === 'written') return final;
      if (outcome === 'refused') return this.keptEnd();
      if (outcome === 'too_large') return shrunk ? final : this.keepFinal(tooLargeToKeep(final), true);
      if (tries >= FINAL_ATTEMPTS) return final;
      await pause(tries);
    }
  }

  /** The final state kept for this response, if it has one. */
  private async keptEnd(): Promise<ResponseObject | undefined> {
    try {
      const { response } = await this.stored.retrieve(this.run.scope, this.id);
      return RUNNING_STATUSES.has(response.status) ? undefined : response;
    } catch {
      return undefined;
    }
  }

  private write(step: () => Promise<void>): void {
    this.written = this.written.then(step);
  }

  /** `attempt` until it succeeds; `persist`: a few more times, further apart (else once). */
  private async retried(attempt: () => Promise<boolean>, persist: boolean): Promise<boolean> {
    for (let tries = 0; ; tries += 1) {
      if (await attempt()) return true;
      if (!persist || tries >= FINAL_ATTEMPTS) return false;
      await pause(tries);
    }
  }

  private cutShort(): ResponseObject {
    return {
      ...this.state,
      status: 'failed',
      output: this.finishedItems,
      error: { code: 'server_error', message: 'The generation ended early.' },
    };
  }
}

/** The event that ends a Responses stream in state `response` (`response.completed`, ...), numbered `sequence`. */
function closingEvent(response: ResponseObject, sequence: number): { event: string; data: string } {
  const event = `response.${response.status}`;
  return { event, data: JSON.stringify({ type: event, sequence_number: sequence, response }) };
}

/** The pause before try `tries + 1` of a final write: 100, 200, 400 ms. */
function pause(tries: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 100 * 2 ** tries));
}

/** A finished response the store cannot hold, as the failed one it keeps instead: no output, the reason. */
function tooLargeToKeep(final: ResponseObject): ResponseObject {
  const message = 'The response is larger than the response store holds (responses.maxStoredBytes): it was not kept.';
  return { ...final, status: 'failed', output: [], error: { code: 'response_too_large', message } } as ResponseObject;
}
