import type { ReasoningDelta, TextDelta, ToolCallDelta } from '../../engine/engine-event.js';
import { ReasoningTagParser } from './reasoning-tag-parser.js';
import { StopStringMatcher } from './stop-string-matcher.js';
import { ToolCallTagParser } from './tool-call-tag-parser.js';

export type OutputDelta = TextDelta | ReasoningDelta | ToolCallDelta;

export interface RawOutputParserOptions {
  /** The client's stop strings: matching one ends the output and is reported as the stop sequence. */
  stops: readonly string[];
  /** The chat template's end-of-turn texts: they end the output too, but are not the client's. */
  hiddenStops?: readonly string[];
  /** The prompt opened the reasoning tag already. */
  startInReasoning?: boolean;
  /** Parse `<tool_call>` tags into tool calls (only when the request offered tools). */
  toolCalls: boolean;
  newCallId: () => string;
}

export interface ParsedStep {
  deltas: OutputDelta[];
  /** Set when a stop string matched: the output is over (the rest of the piece is dropped). */
  stop?: { sequence: string; requested: boolean };
}

/**
 * The output parsers of a raw-text engine, in their order: stop strings on the raw text (as
 * llama.cpp and vLLM match them), then the reasoning split, then tool-call tags in the answer.
 * Pure: one instance per generation, fed the decoded text of each token.
 *
 * Every stage may hold text back, so a token can produce no delta; `finish` releases it all.
 */
export class RawOutputParser {
  private readonly stops: StopStringMatcher;
  private readonly requestedStops: ReadonlySet<string>;
  private readonly reasoning: ReasoningTagParser;
  private readonly tools?: ToolCallTagParser;

  constructor(options: RawOutputParserOptions) {
    this.requestedStops = new Set(options.stops);
    this.stops = new StopStringMatcher([...options.stops, ...(options.hiddenStops ?? [])]);
    this.reasoning = new ReasoningTagParser({ startInside: options.startInReasoning });
    if (options.toolCalls) this.tools = new ToolCallTagParser({ newCallId: options.newCallId });
  }

  /** Whether the latest text went to the reasoning (for counting reasoning tokens). */
  get inReasoning(): boolean {
    return this.reasoning.inReasoning;
  }

  get toolCallCount(): number {
    return this.tools?.callCount ?? 0;
  }

  push(text: string): ParsedStep {
    const { emit, stop } = this.stops.push(text);
    const deltas = this.split(this.reasoning.push(emit));
    if (stop === undefined) return { deltas };
    return {
      deltas: merge([...deltas, ...this.finishParsers()]),
      stop: { sequence: stop, requested: this.requestedStops.has(stop) },
    };
  }

  /** The output ended without a stop string: everything held back is released. */
  finish(): OutputDelta[] {
    return merge([...this.split(this.reasoning.push(this.stops.flush())), ...this.finishParsers()]);
  }

  private finishParsers(): OutputDelta[] {
    const deltas = this.split(this.reasoning.flush());
    if (this.tools) deltas.push(...this.tools.flush());
    return deltas;
  }

  private split(pieces: Array<TextDelta | ReasoningDelta>): OutputDelta[] {
    const deltas: OutputDelta[] = [];
    for (const piece of pieces) {
      if (piece.type === 'reasoning' || !this.tools) deltas.push(piece);
      else deltas.push(...this.tools.push(piece.text));
    }
    return merge(deltas);
  }
}

/** Joins neighbouring text (or reasoning) deltas, so one token gives at most one delta of each. */
function merge(deltas: OutputDelta[]): OutputDelta[] {
  const merged: OutputDelta[] = [];
  for (const delta of deltas) {
    const last = merged.at(-1);
    if (last && delta.type !== 'tool_call' && last.type === delta.type) {
      merged[merged.length - 1] = { type: delta.type, text: (last as TextDelta).text + delta.text };
    } else {
      merged.push(delta);
    }
  }
  return merged;
}
