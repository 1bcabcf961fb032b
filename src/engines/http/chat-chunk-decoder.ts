import { completionLogprobsOf } from './completion-logprobs.js';
import type { EngineEvent, FinishReason, Timings, TokenUsage, ToolCallDelta } from '../../engine/engine-event.js';
import { makeTimings, ZERO_USAGE } from '../../engine/engine-event.js';
import { readContentChunk } from './content-chunk-shortcut.js';
import { mapUpstreamFinishReason } from './map-upstream-finish-reason.js';
import type {
  UpstreamChoice,
  UpstreamChunk,
  UpstreamDelta,
  UpstreamToolCallDelta,
  UpstreamUsage,
} from './upstream-chunk.js';
import { keepText, type Redact } from './secret-redactor.js';
import { upstreamFrameError, upstreamProtocolError } from './upstream-error.js';

/** Nothing to emit (shared: callers only read the events). */
const NONE: readonly EngineEvent[] = Object.freeze([]);

/**
 * Upstream `chat.completion.chunk` payloads (one SSE `data:` each) to engine events.
 *
 * - Only real output becomes a delta: the role chunk (`content: ""` or `null`), empty chunks and
 *   the finish chunk's empty content are dropped, so they do not stop the gateway's heartbeats.
 * - `reasoning` and `reasoning_content` both become reasoning deltas; a server that sends both
 *   (vLLM during the rename) is read once.
 * - A chunk with output yields its deltas, the first carrying the running counters (see
 *   OutputCounters): one event per chunk on the way to the client; a chunk with usage or timings
 *   but no output yields an `ack`. Without upstream usage, each output chunk counts as one
 *   completion token until the upstream's usage replaces the count.
 * - Timings: llama.cpp's `timings` when the upstream sends them; otherwise measured here from
 *   arrival times, so `timings_per_token` works on any upstream. Prefill (`prompt_ms`) runs from
 *   the request to the first output; decode (`predicted_ms`) from the first output to the latest.
 * - `[DONE]` yields `done`. Errors are thrown as UpstreamError: an in-band `{"error": ...}`, a
 *   payload that is not JSON, a stream that ends before it finished.
 */
export class ChatChunkDecoder {
  private usage: TokenUsage = ZERO_USAGE;
  private upstreamTimings?: Timings;
  private firstOutputAt?: number;
  private lastOutputAt = 0;
  private finishReason?: FinishReason;
  private stopSequence?: string;
  private finished = false;
  /** Tool calls by index: a call is announced (id and name) once its name is known. */
  private readonly calls = new Map<number, { id?: string; name?: string; announced: boolean; held: string }>();

  /**
   * Reasoning tokens counted per chunk that carries reasoning, when the upstream's usage does not
   * say (vLLM's does not): one per chunk in a stream, none in a whole answer, where nothing can
   * be counted (reported as 0 rather than a made-up 1).
   */
  private readonly reasoningPerChunk: number;
  /** Applied to the text of an in-band error frame before it may reach a client. */
  private readonly redact: Redact;
  /** A continuation of answer text: whatever the upstream files as reasoning is answer text (see DecoderOptions). */
  private readonly continuesText: boolean;
  private readonly onBadUsage: (message: string) => void;
  private toldBadUsage = false;

  constructor(
    private readonly now: () => number,
    private readonly startedAt: number = now(),
    { whole = false, redact = keepText, continuesText = false, onBadUsage = () => {} }: DecoderOptions = {},
  ) {
    this.onBadUsage = onBadUsage;
    this.reasoningPerChunk = whole || continuesText ? 0 : 1;
    this.redact = redact;
    this.continuesText = continuesText;
  }

  /** Whether `[DONE]` arrived; later payloads are ignored. */
  get isDone(): boolean {
    return this.finished;
  }

  /** The events of one stream event's data. */
  decode(data: string): readonly EngineEvent[] {
    if (this.finished) return NONE;
    if (data.trim() === '[DONE]') return [this.done()];
    return this.decodeChunk(readContentChunk(data) ?? parseUpstreamPayload(data, 'stream event'));
  }

  /** One parsed chunk (a whole answer comes as one, see decodeUpstreamJson). */
  decodeChunk(chunk: UpstreamChunk): readonly EngineEvent[] {
    if (this.finished) return NONE;
    if ((chunk.error !== undefined && chunk.error !== null) || chunk.object === 'error')
      throw upstreamFrameError(chunk, this.redact);

    const choice = firstChoiceOf(chunk.choices);
    const delta = choice?.delta ?? (typeof choice?.text === 'string' ? { content: choice.text } : undefined);
    if (delta) checkDeltaTypes(delta);
    let reasoning = delta ? delta.reasoning || delta.reasoning_content : undefined;
    let content = delta?.content;
    if (this.continuesText && reasoning) {
      content = reasoning + (content ?? '');
      reasoning = undefined;
    }
    const calls = delta?.tool_calls ? this.toolCallDeltas(delta.tool_calls) : undefined;
    if (choice) this.noteFinish(choice);
    const output = !!reasoning || !!content || (calls !== undefined && calls.length > 0);
    if (output) {
      const at = this.now();
      this.firstOutputAt ??= at;
      this.lastOutputAt = at;
    }
    const counted = this.count(output, !!reasoning, chunk.usage && this.checkedUsage(chunk.usage));
    const timed = this.readTimings(chunk.timings);
    if (!output) return counted || timed ? [{ type: 'ack', usage: this.usage, timings: this.timings() }] : NONE;
    // The first piece carries the counters; content alone (nearly every chunk) is one event.
    const usage = this.usage;
    const timings = this.timings();
    if (reasoning) {
      const events: EngineEvent[] = [{ type: 'reasoning', text: reasoning, usage, timings }];
      if (content) events.push({ type: 'text', text: content });
      if (calls) events.push(...calls);
      return events;
    }
    if (content) {
      const logprobs = completionLogprobsOf(choice?.logprobs);
      const text: EngineEvent =
        logprobs === undefined
          ? { type: 'text', text: content, usage, timings }
          : { type: 'text', text: content, usage, timings, logprobs };
      return calls ? [text, ...calls] : [text];
    }
    const [first, ...rest] = calls!;
    return [{ ...first, usage, timings }, ...rest];
  }

  /** The body ended. Without `[DONE]`, a stream that reported its finish reason still counts as whole. */
  end(): readonly EngineEvent[] {
    if (this.finished) return NONE;
    if (this.finishReason === undefined) {
      throw upstreamProtocolError('The upstream closed the stream before it finished.', undefined, 'reset');
    }
    return [this.done()];
  }

  private done(): EngineEvent {
    this.finished = true;
    return {
      type: 'done',
      finishReason: this.finishReason ?? 'stop',
      stopSequence: this.stopSequence,
      usage: this.usage,
    };
  }

  /**
   * The usage with every count that is not a plausible token count (a non-negative integer below
   * MAX_TOKEN_COUNT) left out, as if the upstream had not sent it; told once per answer.
   */
  private checkedUsage(usage: UpstreamUsage): UpstreamUsage {
    const prompt = usage.prompt_tokens;
    const completion = usage.completion_tokens;
    const cached = usage.prompt_tokens_details?.cached_tokens;
    const reasoning = usage.completion_tokens_details?.reasoning_tokens;
    if (isCount(prompt) && isCount(completion) && isCount(cached) && isCount(reasoning)) return usage;
    if (!this.toldBadUsage) {
      this.toldBadUsage = true;
      this.onBadUsage('The upstream reported usage counts that are not token counts; they are ignored.');
    }
    return {
      prompt_tokens: isCount(prompt) ? prompt : undefined,
      completion_tokens: isCount(completion) ? completion : undefined,
      prompt_tokens_details: isCount(cached) ? usage.prompt_tokens_details : undefined,
      completion_tokens_details: isCount(reasoning) ? usage.completion_tokens_details : undefined,
    };
  }

  /** Tool-call pieces to events: a call is announced (id and name) once its name is known. */
  private toolCallDeltas(calls: UpstreamToolCallDelta[]): ToolCallDelta[] {
    const events: ToolCallDelta[] = [];
    for (const call of calls) {
      const index = call.index ?? 0;
      let state = this.calls.get(index);
      if (state === undefined) {
        state = { announced: false, held: '' };
        this.calls.set(index, state);
      }
      state.id ??= call.id ?? undefined;
      state.name ??= call.function?.name ?? undefined;
      const fragment = call.function?.arguments ?? '';
      if (state.announced) {
        if (fragment.length > 0) events.push({ type: 'tool_call', index, arguments: fragment });
      } else if (state.name === undefined) {
        // Some servers send the id before the name: the engine port promises both in the first piece.
        state.held += fragment;
      } else {
        state.announced = true;
        events.push({
          type: 'tool_call',
          index,
          id: state.id ?? `call_${index}`,
          name: state.name,
          arguments: state.held + fragment,
        });
        state.held = '';
      }
    }
    return events;
  }

  private noteFinish(choice: UpstreamChoice): void {
    if (!choice.finish_reason) return;
    this.finishReason = mapUpstreamFinishReason(choice.finish_reason);
    if (typeof choice.stop_reason === 'string') this.stopSequence = choice.stop_reason;
  }

  /** Updates the counters for a chunk (`output`: it showed something; `reasoning`: some of it reasoning); true when they changed. */
  private count(output: boolean, reasoning: boolean, usage: UpstreamUsage | null | undefined): boolean {
    const reasoned = reasoning ? this.reasoningPerChunk : 0;
    if (usage) {
      const countedReasoning = this.usage.reasoningTokens + reasoned;
      // A new usage object only when a counter moved: continuous usage repeats itself on most chunks.
      const changed = !sameAsUpstream(this.usage, usage, countedReasoning);
      if (changed) this.usage = toTokenUsage(usage, countedReasoning);
      // The upstream counts as reasoning what continues the answer's text.
      if (this.continuesText && this.usage.reasoningTokens > 0) this.usage = { ...this.usage, reasoningTokens: 0 };
      return changed || output;
    }
    if (!output) return false;
    this.usage = {
      ...this.usage,
      completionTokens: this.usage.completionTokens + 1,
      reasoningTokens: this.usage.reasoningTokens + reasoned,
    };
    return true;
  }

  private readTimings(raw: Record<string, unknown> | undefined): boolean {
    if (!raw || typeof raw !== 'object') return false;
    const number = (key: string) => (typeof raw[key] === 'number' ? (raw[key] as number) : 0);
    this.upstreamTimings = {
      cache_n: number('cache_n'),
      prompt_n: number('prompt_n'),
      prompt_ms: number('prompt_ms'),
      prompt_per_token_ms: number('prompt_per_token_ms'),
      prompt_per_second: number('prompt_per_second'),
      predicted_n: number('predicted_n'),
      predicted_ms: number('predicted_ms'),
      predicted_per_token_ms: number('predicted_per_token_ms'),
      predicted_per_second: number('predicted_per_second'),
    };
    return true;
  }

  private timings(): Timings {
    if (this.upstreamTimings) return this.upstreamTimings;
    const promptEnd = this.firstOutputAt ?? this.now();
    return makeTimings({
      promptN: this.usage.promptTokens,
      promptMs: promptEnd - this.startedAt,
      predictedN: this.usage.completionTokens,
      predictedMs: this.firstOutputAt === undefined ? 0 : this.lastOutputAt - this.firstOutputAt,
      cacheN: this.usage.cachedTokens,
    });
  }
}

export interface DecoderOptions {
  /** One JSON answer: reasoning is not counted per chunk. */
  whole?: boolean;
  redact?: Redact;
  /**
   * The answer continues text (a mid-stream continuation after the answer's text began): output
   * in a reasoning field is answer text, and no token is reasoning. vLLM's DeepSeek-R1 parser files
   * output without a closing `</think>` as reasoning, and a continuation never repeats it.
   */
  continuesText?: boolean;
  /** Told (once per answer) of usage counts that were ignored, being no token counts. */
  onBadUsage?: (message: string) => void;
}

/** No context holds two billion tokens: a count past it is garbage (1e308 would lock a tenant out). */
const MAX_TOKEN_COUNT = 2 ** 31 - 1;

/** Absent, or a plausible token count. */
function isCount(value: unknown): boolean {
  return (
    value === undefined ||
    value === null ||
    (Number.isInteger(value) && (value as number) >= 0 && (value as number) <= MAX_TOKEN_COUNT)
  );
}

/** Text fields that are not strings (or null) would reach clients as `[object Object]`: a malformed chunk. */
function checkDeltaTypes(delta: UpstreamDelta): void {
  const text = (value: unknown) => value === undefined || value === null || typeof value === 'string';
  let ok = text(delta.content) && text(delta.reasoning) && text(delta.reasoning_content);
  if (ok && delta.tool_calls !== undefined && delta.tool_calls !== null) {
    ok =
      Array.isArray(delta.tool_calls) &&
      delta.tool_calls.every(
        (call) =>
          typeof call === 'object' &&
          call !== null &&
          text(call.id) &&
          text(call.function?.name) &&
          text(call.function?.arguments),
      );
  }
  if (!ok) throw upstreamProtocolError('The upstream sent a chunk whose text is not a string.');
}

/**
 * An upstream payload (`what`: a stream event's data, or a whole JSON answer) as an object; an
 * UpstreamError (a fault of the replica) when it is not JSON, or not an object.
 */
export function parseUpstreamPayload(text: string, what: 'stream event' | 'JSON answer'): UpstreamChunk {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    // Not quoted: the payload is the upstream's text, which may hold another request's output.
    throw upstreamProtocolError(`The upstream sent a malformed ${what} (not JSON).`, error);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw upstreamProtocolError(`The upstream sent a ${what} that is not a JSON object.`);
  }
  return parsed as UpstreamChunk;
}

/** The choice with index 0 (the only one Gantry asks for), without a closure per chunk. */
function firstChoiceOf(choices: UpstreamChoice[] | null | undefined): UpstreamChoice | undefined {
  if (!choices) return undefined;
  for (const choice of choices) if ((choice.index ?? 0) === 0) return choice;
  return undefined;
}

function toTokenUsage(usage: UpstreamUsage, countedReasoning: number): TokenUsage {
  return {
    promptTokens: usage.prompt_tokens ?? 0,
    completionTokens: usage.completion_tokens ?? 0,
    cachedTokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
    reasoningTokens: usage.completion_tokens_details?.reasoning_tokens ?? countedReasoning,
  };
}

function sameAsUpstream(current: TokenUsage, usage: UpstreamUsage, countedReasoning: number): boolean {
  return (
    current.promptTokens === (usage.prompt_tokens ?? 0) &&
    current.completionTokens === (usage.completion_tokens ?? 0) &&
    current.cachedTokens === (usage.prompt_tokens_details?.cached_tokens ?? 0) &&
    current.reasoningTokens === (usage.completion_tokens_details?.reasoning_tokens ?? countedReasoning)
  );
}
