/**
 * What an engine emits while it generates: a small tagged union that every engine maps its own
 * wire or API onto, and every protocol encoder reads (N engines + M protocols = N + M mappers).
 *
 * Order: at most one `accepted` first, zero or more `ack`s, deltas and `resuming`s, then exactly one `done`;
 * failures are RxJS errors carrying an EngineError.
 *
 * Running counters (usage and timings, the totals so far) come on an `ack`, or on the output
 * piece they count: an engine that counts as it produces puts them on the piece, one event per
 * step instead of an ack and a delta (every event crosses the whole chain to the client), and
 * sends an `ack` alone for a step that shows nothing. A consumer reads both forms (`countersOf`);
 * one that drops a piece passes its counters on as an ack (`countersAsAck`). The first counters
 * mark the end of prefill.
 */
export type EngineEvent =
  AcceptedEvent | AckEvent | TextDelta | ReasoningDelta | ToolCallDelta | ResumingEvent | DoneEvent;

/**
 * The engine has taken the request on: an upstream's 2xx response headers arrived, a local prompt
 * was tokenized and fits the context. A failure before it is a refusal, which a stream answers
 * with a real HTTP status; a failure after it is reported in-band. An engine that never emits it
 * is taken as accepted at its first event of any kind. Not output, and not the end of prefill.
 */
export interface AcceptedEvent {
  type: 'accepted';
  /** The prompt's tokens, and how many of them a cache holds, when the engine knows them now. */
  usage?: TokenUsage;
}

/** An acceptance that knows no counts yet. */
export const ACCEPTED: AcceptedEvent = Object.freeze({ type: 'accepted' });

/**
 * The answer was cut after its output began and goes on elsewhere (the HTTP engine's mid-stream
 * failover): its output pauses while the continuation is prefilled, and the keep-alive beats
 * again until the next output (docs/apis.md, "Stream semantics"). Not output; nothing a client sees.
 */
export interface ResumingEvent {
  type: 'resuming';
}

export const RESUMING: ResumingEvent = Object.freeze({ type: 'resuming' });

/** One engine step finished. An ack may come without a delta (a parser still holds text back). */
export interface AckEvent {
  type: 'ack';
  usage: TokenUsage;
  timings: Timings;
}

/**
 * The counters an output piece may carry: what an ack just before it would (`usage` with its
 * `timings`, both or neither). A piece without them leaves the counters as they were.
 */
export interface OutputCounters {
  usage?: TokenUsage;
  timings?: Timings;
}

export interface TextDelta extends OutputCounters {
  type: 'text';
  text: string;
  /** Which choice of a completion with several (`n`, a list of prompts) the text is of; absent: the only one (generation/completion-choices.ts). */
  choice?: number;
  /** A completion's log probabilities of this piece's tokens, as its upstream sent them (`tokens`, `token_logprobs`, ...). */
  logprobs?: CompletionLogprobs;
}

/** The Completions API's `logprobs` object: one entry per token in each list. */
export interface CompletionLogprobs {
  tokens: string[];
  token_logprobs: Array<number | null>;
  top_logprobs: Array<Record<string, number> | null>;
  text_offset: number[];
}

export interface ReasoningDelta extends OutputCounters {
  type: 'reasoning';
  text: string;
}

/**
 * A piece of a tool call. The first piece of a call carries `id` and `name`; later pieces carry
 * only an `arguments` fragment. Pieces of one call share its `index`.
 */
export interface ToolCallDelta extends OutputCounters {
  type: 'tool_call';
  index: number;
  id?: string;
  name?: string;
  arguments: string;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'abort';

export interface DoneEvent {
  type: 'done';
  finishReason: FinishReason;
  /** The stop string that ended the output, when one did. */
  stopSequence?: string;
  usage: TokenUsage;
  /** How each choice of a completion with several ended, by choice; `finishReason` is the first one's. */
  choices?: ChoiceEnd[];
}

export interface ChoiceEnd {
  finishReason: FinishReason;
  stopSequence?: string;
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens served from a cache (KV reuse, prefix cache). */
  cachedTokens: number;
  /** Completion tokens spent on reasoning (included in completionTokens). */
  reasoningTokens: number;
}

/** llama.cpp's `timings` block, field for field (server-task.cpp `result_timings`). */
export interface Timings {
  cache_n: number;
  prompt_n: number;
  prompt_ms: number;
  prompt_per_token_ms: number;
  prompt_per_second: number;
  predicted_n: number;
  predicted_ms: number;
  predicted_per_token_ms: number;
  predicted_per_second: number;
}

export const ZERO_USAGE: TokenUsage = Object.freeze({
  promptTokens: 0,
  completionTokens: 0,
  cachedTokens: 0,
  reasoningTokens: 0,
});

/** Timings of nothing measured yet: zeros. */
export const NO_TIMINGS: Timings = Object.freeze(
  makeTimings({ promptN: 0, promptMs: 0, predictedN: 0, predictedMs: 0 }),
);

/** Real output: what ends the keep-alive heartbeats. An ack or an empty text is not output. */
export function isOutput(event: { type: string; text?: string }): boolean {
  switch (event.type) {
    case 'text':
    case 'reasoning':
      return event.text !== undefined && event.text.length > 0;
    case 'tool_call':
      return true;
    default:
      return false;
  }
}

/** The running counters an event carries: an ack's, or an output piece's (see OutputCounters); undefined for any other. */
export function countersOf(event: EngineEvent): { usage: TokenUsage; timings?: Timings } | undefined {
  switch (event.type) {
    case 'ack':
      return event;
    case 'text':
    case 'reasoning':
    case 'tool_call':
      return event.usage === undefined ? undefined : (event as { usage: TokenUsage; timings?: Timings });
    default:
      return undefined;
  }
}

/** The counters an output piece carries, as the ack they stand for where the piece itself does not go on; undefined without them. */
export function countersAsAck(event: EngineEvent): AckEvent | undefined {
  const counted = countersOf(event);
  if (counted === undefined) return undefined;
  return event.type === 'ack' ? event : { type: 'ack', usage: counted.usage, timings: counted.timings ?? NO_TIMINGS };
}

/** Builds a timings block from raw counts, deriving the per-token and per-second figures. */
export function makeTimings(counts: {
  promptN: number;
  promptMs: number;
  predictedN: number;
  predictedMs: number;
  cacheN?: number;
}): Timings {
  return {
    cache_n: counts.cacheN ?? 0,
    prompt_n: counts.promptN,
    prompt_ms: counts.promptMs,
    prompt_per_token_ms: counts.promptN > 0 ? counts.promptMs / counts.promptN : 0,
    prompt_per_second: counts.promptMs > 0 ? (1e3 / counts.promptMs) * counts.promptN : 0,
    predicted_n: counts.predictedN,
    predicted_ms: counts.predictedMs,
    predicted_per_token_ms: counts.predictedN > 0 ? counts.predictedMs / counts.predictedN : 0,
    predicted_per_second: counts.predictedMs > 0 ? (1e3 / counts.predictedMs) * counts.predictedN : 0,
  };
}
