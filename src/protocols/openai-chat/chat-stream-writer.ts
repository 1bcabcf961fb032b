import type { DoneEvent, EngineEvent, OutputCounters, Timings, TokenUsage } from '../../engine/engine-event.js';
import { ZERO_USAGE } from '../../engine/engine-event.js';
import { asGatewayError } from '../../errors/gateway-error.js';
import type { StreamEvent } from '../../streaming/stream-event.js';
import { toOpenAIErrorBody } from '../errors/openai-error.js';
import { flattenString } from '../sse/flatten-string.js';
import { DONE_FRAME, type SseFrame } from '../sse/sse-frame.js';
import { toChatFinishReason, toChatUsage } from './chat-usage.js';

const ROLE_CHOICES = '[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]';
const HEARTBEAT_CHOICES = '[{"index":0,"delta":{},"logprobs":null,"finish_reason":null}]';

export interface ChatStreamOptions {
  id: string;
  model: string;
  created: number;
  /** `stream_options.include_usage`: a final `choices: []` chunk with the whole usage. */
  includeUsage: boolean;
  /** `stream_options.continuous_usage_stats` (vLLM): usage so far on every chunk. */
  continuousUsage: boolean;
  /** `timings_per_token` (llama.cpp): the latest ack's timings on every chunk after it. */
  timings: boolean;
}

/**
 * One chat stream being written (see encodeChatStream): the chunk prefix, serialized once, and the
 * latest counters, which chunks carry when the stream options ask for them.
 */
export class ChatStreamWriter {
  private readonly prefix: string;
  private usage: TokenUsage = ZERO_USAGE;
  private timings: Timings | undefined;

  constructor(
    private readonly options: ChatStreamOptions,
    private readonly send: (frame: SseFrame) => void,
  ) {
    this.prefix =
      `{"id":${JSON.stringify(options.id)},"object":"chat.completion.chunk",` +
      `"created":${options.created},"model":${JSON.stringify(options.model)},"choices":`;
    flattenString(this.prefix);
  }

  /** The role chunk precedes anything measured: no usage, whatever the stream options. */
  open(): void {
    this.send({ data: `${this.prefix}${ROLE_CHOICES}}` });
  }

  write(event: StreamEvent): void {
    switch (event.type) {
      case 'ack':
        return this.count(event);
      case 'accepted':
      case 'resuming':
        return;
      case 'heartbeat':
        return this.chunk(HEARTBEAT_CHOICES);
      case 'text':
      case 'reasoning':
      case 'tool_call':
        this.count(event);
        return this.chunk(deltaChoices(outputDelta(event)));
      case 'done':
        return this.finish(event);
    }
  }

  /** A failure after the stream opened: an error body, then `[DONE]`. */
  fail(error: unknown): void {
    this.send({ data: JSON.stringify(toOpenAIErrorBody(asGatewayError(error))) });
    this.send(DONE_FRAME);
  }

  end(): void {
    this.send(DONE_FRAME);
  }

  private finish(done: DoneEvent): void {
    this.usage = done.usage;
    this.chunk(`[{"index":0,"delta":{},"logprobs":null,"finish_reason":"${toChatFinishReason(done.finishReason)}"}]`);
    if (this.options.includeUsage) this.chunk('[]', this.usage);
  }

  /** An ack's counters, or an output piece's (read before the piece is written, as an ack before it would be). */
  private count(counted: OutputCounters): void {
    if (counted.usage === undefined) return;
    this.usage = counted.usage;
    this.timings = counted.timings;
  }

  private chunk(choices: string, usage = this.options.continuousUsage ? this.usage : undefined): void {
    let data = this.prefix + choices;
    if (usage) data += `,"usage":${JSON.stringify(toChatUsage(usage))}`;
    if (this.options.timings && this.timings) data += `,"timings":${JSON.stringify(this.timings)}`;
    this.send({ data: data + '}' });
  }
}

function deltaChoices(deltaJson: string): string {
  return `[{"index":0,"delta":${deltaJson},"logprobs":null,"finish_reason":null}]`;
}

/** An output piece as a chat delta's JSON. */
function outputDelta(event: Extract<EngineEvent, { type: 'text' | 'reasoning' | 'tool_call' }>): string {
  switch (event.type) {
    case 'text':
      return `{"content":${JSON.stringify(event.text)}}`;
    case 'reasoning':
      return `{"reasoning_content":${JSON.stringify(event.text)}}`;
    case 'tool_call':
      return `{"tool_calls":[${JSON.stringify(toolCallDelta(event))}]}`;
  }
}

/** The first piece of a call carries id, type and name; later pieces only index and arguments. */
function toolCallDelta(event: Extract<EngineEvent, { type: 'tool_call' }>) {
  if (event.id === undefined && event.name === undefined) {
    return { index: event.index, function: { arguments: event.arguments } };
  }
  return {
    index: event.index,
    id: event.id,
    type: 'function',
    function: { name: event.name, arguments: event.arguments },
  };
}
