import type { MidStreamFailoverConfig } from './mid-stream-failover-config.js';
import type { EngineErrorKind } from '../../engine/engine-error.js';
import {
  makeTimings,
  NO_TIMINGS,
  ZERO_USAGE,
  type AckEvent,
  type DoneEvent,
  type EngineEvent,
  type ReasoningDelta,
  type TextDelta,
  type Timings,
  type TokenUsage,
  type ToolCallDelta,
} from '../../engine/engine-event.js';
import type { GenerationRequest } from '../../engine/generation-request.js';
import { toUpstreamContinuation } from './upstream-chat-request.js';
import { UpstreamError, type CutReason } from './upstream-error.js';

const PIECES_PER_BLOCK = 256;

/** Why an answer that a failure cut was not continued (the `reason` of `gantry_stream_resume_failures_total`). */
export type ResumeFailure = 'spent' | 'not_continuable' | 'refused' | 'no_replica';

/** Go on: send `body` to another replica; its measured prefill runs from `startedAt`. */
export interface Continuation {
  kind: 'continue';
  reason: CutReason;
  body: Record<string, unknown>;
  startedAt: number;
  /** 1 for the answer's first resume. */
  resume: number;
  producedTokens: number;
}

/**
 * What to do about a failure that cut an answer: continue it, finish it (it had used its whole
 * token budget, so one healthy replica would have stopped there with `length`), or end it with
 * `error` (counted under `failure` when failover was tried or refused; absent for a failure that
 * is not a replica's cut, which ends the answer as it would without failover).
 */
export type ResumeDecision =
  Continuation | { kind: 'finish'; event: DoneEvent } | { kind: 'end'; error: unknown; failure?: ResumeFailure };

/**
 * The state of one streamed answer that the HTTP engine may continue on another replica when its
 * own fails after output began: what the client was sent (the text, whether it was reasoning or
 * writing a tool call), the client's counters, and the resumes spent.
 *
 * The client sees one answer. Every event of every attempt passes through `pass`, which records
 * it and, from the first continuation on, restates the counters as the client's: prompt tokens
 * the first attempt's (a continuation's prompt holds the partial answer), completion tokens each
 * counted once (the answer's so far plus the continuation's own), prefill timings the first
 * attempt's, decode timings from the first output to the latest (so a resume shows as one long
 * gap between two tokens, which is what the client lived).
 *
 * Not continued: a response format (a grammar restarted mid-answer would not produce valid JSON),
 * reasoning in progress and a tool call being written (chat templates render neither as text that
 * `continue_final_message` can reopen), and an answer whose resumes are spent.
 */
export class MidStreamFailover {
  private resumes = 0;
  /**
   * The text so far, kept as joined blocks of pieces: a string grown by `+=` costs a rope node
   * (about 32 bytes) per piece, many times the piece itself on a long answer.
   */
  private readonly blocks: string[] = [];
  private pieces: string[] = [];
  private lastOutput?: 'text' | 'reasoning';
  private wroteToolCall = false;
  /** The client's counters and timings: the latest passed on (an ack's, or an output piece's). */
  private usage: TokenUsage = ZERO_USAGE;
  private timings?: Timings;
  /** The client's counters when the current continuation began; undefined during the first attempt. */
  private base?: { usage: TokenUsage; timings: Timings };
  /** Whether the text is kept at all: an answer that can never be continued needs none of it. */
  private readonly keepsText: boolean;

  constructor(
    private readonly terms: ContinuationTerms,
    /**
     * The first attempt's upstream body, serialized: each continuation extends it, parsed again
     * then. Kept as objects, it would be copied by every scavenge while the answer streams
     * (docs/benchmarks.md, "The floors, with profiles"); a resume is rare.
     */
    private readonly body: string,
    private readonly policy: Pick<MidStreamFailoverConfig, 'maxResumes'>,
    /** When the request began (its measured prefill runs from it). */
    private readonly startedAt: number,
  ) {
    this.keepsText = policy.maxResumes > 0 && !terms.followsFormat;
  }

  /** Records an event of the current attempt and returns it as the client's. */
  pass(event: EngineEvent): EngineEvent {
    switch (event.type) {
      case 'text':
        if (this.keepsText) this.keep(event.text);
        if (event.text.length > 0) this.lastOutput = 'text';
        return this.counted(event);
      case 'reasoning':
        if (event.text.length > 0) this.lastOutput = 'reasoning';
        return this.counted(event);
      case 'tool_call':
        this.wroteToolCall = true;
        return this.counted(event);
      case 'ack':
        return this.counted(event);
      case 'done':
        return this.base ? { ...event, usage: this.clientUsage(event.usage) } : event;
      case 'accepted':
        // The engine emits one for the whole answer (its first replica's), never a continuation's.
        return event;
      case 'resuming':
        return event;
    }
  }

  private keep(text: string): void {
    this.pieces.push(text);
    if (this.pieces.length === PIECES_PER_BLOCK) {
      this.blocks.push(this.pieces.join(''));
      this.pieces = [];
    }
  }

  /** Records the counters an ack or an output piece carries; a continuation's are restated as the client's. */
  private counted<Event extends AckEvent | TextDelta | ReasoningDelta | ToolCallDelta>(event: Event): Event {
    if (event.usage === undefined) return event;
    if (!this.base) {
      this.usage = event.usage;
      this.timings = event.timings;
      return event;
    }
    this.usage = this.clientUsage(event.usage);
    this.timings = this.clientTimings(event.timings ?? NO_TIMINGS);
    return { ...event, usage: this.usage, timings: this.timings };
  }

  /** What to do about `error`, which ended the current attempt after the answer's output began; `now` on the engine's clock. */
  decide(error: unknown, now: number): ResumeDecision {
    if (!(error instanceof UpstreamError) || error.cut === undefined) {
      // A continuation refused for the request's own reasons says nothing the client did wrong.
      if (this.resumes === 0) return { kind: 'end', error };
      const message = `The answer was cut and its continuation on another replica failed: ${(error as Error)?.message ?? String(error)}`;
      return {
        kind: 'end',
        error: new UpstreamError('upstream', message, { retryable: false, replicaFault: false, cause: error }),
        failure: 'refused',
      };
    }
    const why = this.uncontinuable();
    if (why)
      return {
        kind: 'end',
        error: cutError(error, ` The answer cannot be continued on another replica: ${why}.`),
        failure: 'not_continuable',
      };
    if (this.resumes >= this.policy.maxResumes) {
      const spent =
        this.resumes === 0
          ? ' Mid-stream failover allows no resume (midStreamFailover.maxResumes is 0).'
          : ` It was continued ${this.resumes} time${this.resumes === 1 ? '' : 's'} on other replicas, as many as midStreamFailover.maxResumes allows.`;
      return { kind: 'end', error: cutError(error, spent), failure: 'spent' };
    }
    const maxTokens = this.terms.maxTokens;
    const left = maxTokens === undefined ? undefined : maxTokens - this.usage.completionTokens;
    if (left !== undefined && left <= 0)
      return { kind: 'finish', event: { type: 'done', finishReason: 'length', usage: this.usage } };

    this.resumes += 1;
    const timings = this.timings ?? NO_TIMINGS;
    this.base = { usage: this.usage, timings };
    return {
      kind: 'continue',
      reason: error.cut,
      body: toUpstreamContinuation(
        JSON.parse(this.body) as Record<string, unknown>,
        this.blocks.join('') + this.pieces.join(''),
        left,
      ),
      // The latest output's time, as the client's timings put it: the continuation's measured
      // prefill is then the gap the client saw between two tokens.
      startedAt: Math.min(now, this.startedAt + timings.prompt_ms + timings.predicted_ms),
      resume: this.resumes,
      producedTokens: this.usage.completionTokens,
    };
  }

  /** Why the answer so far cannot be continued faithfully; undefined when it can. */
  private uncontinuable(): string | undefined {
    if (this.terms.followsFormat) return 'it follows a response format, whose grammar would start over';
    if (this.wroteToolCall) return 'it was writing a tool call';
    if (this.lastOutput === 'reasoning') return 'the model was still reasoning';
    return undefined;
  }

  /** A continuation's counters as the client's (see the class comment). */
  private clientUsage(own: TokenUsage): TokenUsage {
    const base = this.base!.usage;
    // An upstream that reports usage only at the end told nothing of the first prompt: the
    // continuation's prompt less the partial answer it carries is the nearest figure.
    const promptTokens =
      base.promptTokens > 0 ? base.promptTokens : Math.max(0, own.promptTokens - base.completionTokens);
    return {
      promptTokens,
      completionTokens: base.completionTokens + own.completionTokens,
      cachedTokens: base.promptTokens > 0 ? base.cachedTokens : Math.min(own.cachedTokens, promptTokens),
      reasoningTokens: base.reasoningTokens + own.reasoningTokens,
    };
  }

  private clientTimings(own: Timings): Timings {
    const base = this.base!.timings;
    return makeTimings({
      promptN: this.usage.promptTokens,
      promptMs: base.prompt_ms,
      predictedN: this.usage.completionTokens,
      // The continuation's prefill (from the latest output, see decide) and its own decoding.
      predictedMs: base.predicted_ms + own.prompt_ms + own.predicted_ms,
      cacheN: this.usage.cachedTokens,
    });
  }
}

/**
 * The failure that cut the answer, told with why it ends here: still an UpstreamError, whose text
 * may be the upstream's (request logs leave it out).
 */
export function cutError(error: UpstreamError, why: string): UpstreamError {
  return new UpstreamError(error.kind as EngineErrorKind, `${error.message}${why}`, {
    retryable: false,
    replicaFault: false,
    cause: error,
  });
}

/** What of a request decides whether and how its answer is continued. */
export interface ContinuationTerms {
  maxTokens?: number;
  /** It follows a response format (JSON, a schema): a grammar restarted mid-answer would break it. */
  followsFormat: boolean;
}

export function continuationTermsOf(request: GenerationRequest): ContinuationTerms {
  const format = request.sampling.responseFormat;
  return { maxTokens: request.sampling.maxTokens, followsFormat: format !== undefined && format.type !== 'text' };
}
