import { asyncScheduler, Observable, type SchedulerLike, type Subscriber, type Subscription } from 'rxjs';
import { EngineError } from '../../engine/engine-error.js';
import type { EngineEvent, FinishReason, Timings, TokenUsage } from '../../engine/engine-event.js';
import { makeTimings } from '../../engine/engine-event.js';
import type { GenerationRequest } from '../../engine/generation-request.js';
import { InferenceEngine } from '../../engine/inference-engine.js';
import type { EmbeddingRequest, EmbeddingResult, PoolingContext } from '../../engine/pooling.js';
import { stubEmbeddings } from './stub-embedding.js';
import type { StubModelConfig } from './stub-model-config.js';
import { StopStringMatcher } from '../text/stop-string-matcher.js';
import { countPromptWords, planStubSteps, type StubStep } from './stub-script.js';

/** With no delay between tokens, this many are emitted per turn of the event loop. */
const TOKENS_PER_TURN = 64;

/**
 * A deterministic engine with no model, for development and tests: it paces a planned answer
 * (see planStubSteps) with real timers and measures its own timings. Every timer it holds is
 * counted in `pendingTimers` and cleared on unsubscribe.
 */
export class StubEngine extends InferenceEngine {
  private timers = 0;
  private running = 0;
  private requestCount = 0;

  constructor(
    private readonly config: StubModelConfig,
    private readonly scheduler: SchedulerLike = asyncScheduler,
  ) {
    super();
  }

  /** Timers scheduled and not yet fired or cleared. */
  get pendingTimers(): number {
    return this.timers;
  }

  /** Generations subscribed and not yet finished or torn down. */
  get activeGenerations(): number {
    return this.running;
  }

  /** The stub counts words, exactly as its usage reports them. */
  override async countPromptTokens(request: GenerationRequest): Promise<number> {
    return countPromptWords(request.messages);
  }

  /** Deterministic vectors (stub-embedding.ts), answered on the next turn; an aborted call answers nothing. */
  override async embed(request: EmbeddingRequest, { signal }: PoolingContext): Promise<EmbeddingResult> {
    await Promise.resolve();
    signal.throwIfAborted();
    return stubEmbeddings(request);
  }

  generate(request: GenerationRequest): Observable<EngineEvent> {
    return new Observable<EngineEvent>((subscriber) => {
      this.requestCount += 1;
      this.running += 1;
      const run = new StubRun(this.config, request, `call_stub${this.requestCount}`, subscriber, (work, delay) =>
        this.schedule(work, delay),
      );
      run.start();
      return () => {
        this.running -= 1;
        run.cancel();
      };
    });
  }

  private schedule(work: () => void, delayMs: number): Subscription {
    this.timers += 1;
    let settled = false;
    const settle = () => {
      if (!settled) {
        settled = true;
        this.timers -= 1;
      }
    };
    const action = this.scheduler.schedule(() => {
      settle();
      work();
    }, delayMs);
    action.add(settle);
    return action;
  }
}

/** One generation's state: the planned steps, where it is in them, and its timer. */
class StubRun {
  private readonly steps: StubStep[];
  private readonly matcher: StopStringMatcher;
  private readonly promptTokens: number;
  private readonly maxTokens: number;
  private readonly startedAt: number;
  private prefillEndedAt = 0;
  private next = 0;
  private completionTokens = 0;
  private reasoningTokens = 0;
  private timer?: Subscription;

  constructor(
    private readonly config: StubModelConfig,
    request: GenerationRequest,
    callPrefix: string,
    private readonly subscriber: Subscriber<EngineEvent>,
    private readonly schedule: (work: () => void, delayMs: number) => Subscription,
  ) {
    this.steps = planStubSteps(request, config.reasoning, callPrefix);
    this.matcher = new StopStringMatcher(request.sampling.stop);
    this.promptTokens = countPromptWords(request.messages);
    this.maxTokens = request.sampling.maxTokens ?? Number.POSITIVE_INFINITY;
    this.startedAt = performance.now();
  }

  /** Accepted at once: the stub has no context to overflow, and its prompt's count is known. */
  start(): void {
    this.subscriber.next({ type: 'accepted', usage: this.usage() });
    if (this.subscriber.closed) return;
    this.timer = this.schedule(() => this.endPrefill(), this.config.prefillMs);
  }

  cancel(): void {
    this.timer?.unsubscribe();
  }

  private endPrefill(): void {
    this.prefillEndedAt = performance.now();
    this.emitAck();
    this.timer = this.schedule(() => this.produce(), this.config.tokenIntervalMs);
  }

  private produce(): void {
    const burst = this.config.tokenIntervalMs === 0 ? TOKENS_PER_TURN : 1;
    for (let produced = 0; produced < burst; produced += 1) {
      if (this.subscriber.closed) return;
      if (this.config.failAfterTokens !== undefined && this.completionTokens >= this.config.failAfterTokens) {
        this.subscriber.error(
          new EngineError(
            this.config.failWith,
            `The stub engine failed after ${this.completionTokens} tokens, as configured.`,
          ),
        );
        return;
      }
      if (this.next >= this.steps.length) return this.finish(this.endReason());
      if (this.completionTokens >= this.maxTokens) return this.finish('length');
      if (this.emitStep(this.steps[this.next++])) return;
    }
    this.timer = this.schedule(() => this.produce(), this.config.tokenIntervalMs);
  }

  /**
   * Emits one token, the running counters on it (an ack alone when the stop-string matcher holds
   * its text back); returns true when it ended the generation (a stop string matched).
   */
  private emitStep(step: StubStep): boolean {
    this.completionTokens += 1;
    if (step.kind === 'reasoning') this.reasoningTokens += 1;
    const { usage, timings } = this.counters();
    switch (step.kind) {
      case 'reasoning':
        this.subscriber.next({ type: 'reasoning', text: step.text, usage, timings });
        return false;
      case 'tool':
        this.subscriber.next({
          type: 'tool_call',
          index: step.index,
          id: step.id,
          name: step.name,
          arguments: step.arguments,
          usage,
          timings,
        });
        return false;
      case 'text': {
        const { emit, stop } = this.matcher.push(step.text);
        this.subscriber.next(
          emit.length > 0 ? { type: 'text', text: emit, usage, timings } : { type: 'ack', usage, timings },
        );
        if (stop === undefined) return false;
        this.finish('stop', stop);
        return true;
      }
    }
  }

  private endReason(): FinishReason {
    return this.steps.some((step) => step.kind === 'tool') ? 'tool_calls' : 'stop';
  }

  private finish(finishReason: FinishReason, stopSequence?: string): void {
    const held = this.matcher.flush();
    if (stopSequence === undefined && held.length > 0) this.subscriber.next({ type: 'text', text: held });
    this.subscriber.next({ type: 'done', finishReason, stopSequence, usage: this.usage() });
    this.subscriber.complete();
  }

  private emitAck(): void {
    this.subscriber.next({ type: 'ack', ...this.counters() });
  }

  /** The usage and timings so far. */
  private counters(): { usage: TokenUsage; timings: Timings } {
    return {
      usage: this.usage(),
      timings: makeTimings({
        promptN: this.promptTokens,
        promptMs: this.prefillEndedAt - this.startedAt,
        predictedN: this.completionTokens,
        predictedMs: this.completionTokens > 0 ? performance.now() - this.prefillEndedAt : 0,
      }),
    };
  }

  private usage(): TokenUsage {
    return {
      promptTokens: this.promptTokens,
      completionTokens: this.completionTokens,
      cachedTokens: 0,
      reasoningTokens: this.reasoningTokens,
    };
  }
}
