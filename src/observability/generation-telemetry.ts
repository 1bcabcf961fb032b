import type { AnswerResume } from '../engine/answer-resume.js';
import type { EngineEvent, FinishReason, TokenUsage } from '../engine/engine-event.js';
import { isOutput, ZERO_USAGE } from '../engine/engine-event.js';
import type { ApiName } from '../protocols/protocol-descriptor.js';

export type { ApiName };

/** Moments in a generation's life that are not engine events. */
export type LifecycleSignal = 'accepted' | 'admitted' | 'heartbeat' | 'resumed';

/**
 * What is known about one generation request as it runs: identity (API, model, engine), the
 * moments that matter (arrival, admission, first and latest output) and the running counters.
 * One instance per HTTP request: the generation pipeline makes it on arrival, hands it to the
 * GenerationHooks and to the route, which hands it to GenerationService.accept, which
 * records acceptance, admission and every engine event. Metrics, traces and logs read the same one.
 * Times are `performance.now()` milliseconds.
 */
export class GenerationTelemetry {
  readonly arrivedAt = performance.now();
  readonly arrivedAtEpochMs = Date.now();
  /** Set once the request passed admission's checks and its stream may open. */
  accepted = false;
  /** Set when an accepted request is given back before its generation ran: what fails it then is a refusal. */
  withdrawn = false;
  model?: string;
  engine?: string;
  /** The caller's tenant (a named key's name, `default` otherwise), once its handler knows it; never the key. */
  tenant?: string;
  maxTokens?: number;
  stream = false;
  admittedAt?: number;
  firstOutputAt?: number;
  lastOutputAt?: number;
  /** Gap between the latest output and the one before it (inter-token latency). */
  lastOutputGapMs?: number;
  outputEvents = 0;
  heartbeats = 0;
  usage: TokenUsage = ZERO_USAGE;
  finishReason?: FinishReason;
  /** Each time the engine continued the answer elsewhere after a failure cut it (absent: never). */
  resumes?: AnswerResume[];
  /** W3C trace context to forward to upstream engines (`traceparent`, `tracestate`). */
  traceHeaders: Record<string, string> = {};
  /** Plain callbacks, not a Subject: a gateway holds thousands of requests at once. */
  private listeners?: Array<(signal: LifecycleSignal) => void>;

  constructor(readonly api: ApiName) {}

  /** Calls `listener` with every later lifecycle signal; returns the function that stops it. */
  onSignal(listener: (signal: LifecycleSignal) => void): () => void {
    // A one-element literal: an array grown by `push` from empty reserves room it never uses.
    if (this.listeners) this.listeners.push(listener);
    else this.listeners = [listener];
    return () => {
      const index = this.listeners?.indexOf(listener) ?? -1;
      if (index !== -1) this.listeners!.splice(index, 1);
    };
  }

  /** Milliseconds spent waiting for an admission slot (undefined until admitted). */
  get queueMs(): number | undefined {
    return this.admittedAt === undefined ? undefined : this.admittedAt - this.arrivedAt;
  }

  /** Milliseconds from arrival to the first output, queue included. */
  get timeToFirstOutputMs(): number | undefined {
    return this.firstOutputAt === undefined ? undefined : this.firstOutputAt - this.arrivedAt;
  }

  /**
   * Names the model and engine as soon as the model is known, so a request its model refuses
   * (a full queue, a limit) is still counted and logged under them.
   */
  identify(details: { model: string; engine: string }): void {
    this.model = details.model;
    this.engine = details.engine;
  }

  markAccepted(details: { model: string; engine: string; maxTokens?: number; stream: boolean }): void {
    Object.assign(this, details);
    this.accepted = true;
    this.signal('accepted');
  }

  markAdmitted(): void {
    this.admittedAt = performance.now();
    this.signal('admitted');
  }

  markHeartbeat(): void {
    this.heartbeats += 1;
    this.signal('heartbeat');
  }

  /** The engine continued the answer elsewhere (the HTTP engine's mid-stream failover). */
  markResumed(resume: AnswerResume): void {
    (this.resumes ??= []).push(resume);
    this.signal('resumed');
  }

  private signal(signal: LifecycleSignal): void {
    if (this.listeners) for (const listener of [...this.listeners]) listener(signal);
  }

  /** Folds an engine event into the counters (the generation pipeline does, before the hooks see the event). */
  observe(event: EngineEvent): void {
    if (event.type === 'ack') {
      this.usage = event.usage;
    } else if (event.type === 'done') {
      this.usage = event.usage;
      this.finishReason = event.finishReason;
    } else if (event.type !== 'accepted' && event.type !== 'resuming') {
      // An output piece, with the counters when it carries them.
      if (event.usage !== undefined) this.usage = event.usage;
      if (!isOutput(event)) return;
      const now = performance.now();
      if (this.firstOutputAt === undefined) this.firstOutputAt = now;
      this.lastOutputGapMs = this.lastOutputAt === undefined ? undefined : now - this.lastOutputAt;
      this.lastOutputAt = now;
      this.outputEvents += 1;
    }
  }
}
