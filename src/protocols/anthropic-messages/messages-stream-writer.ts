import type { DoneEvent, EngineEvent } from '../../engine/engine-event.js';
import { asGatewayError } from '../../errors/gateway-error.js';
import type { StreamEvent } from '../../streaming/stream-event.js';
import { toAnthropicErrorBody } from '../errors/anthropic-error.js';
import type { SseFrame } from '../sse/sse-frame.js';
import {
  anthropicUsage,
  thinkingSignature,
  toAnthropicInput,
  toAnthropicStopReason,
  type AnthropicInputUsage,
} from './anthropic-usage.js';
import { toAnthropicToolUseId } from './tool-use-id.js';

export interface MessagesStreamOptions {
  id: string;
  model: string;
  /**
   * The prompt's tokens, counted before the stream opened: `message_start` carries them, as
   * Anthropic's does, unless the engine's first event brings its own split into fresh and cached.
   */
  inputTokens: number;
}

type OpenBlock =
  | { kind: 'thinking'; index: number; text: string }
  | { kind: 'text'; index: number }
  | { kind: 'tool_use'; index: number; toolIndex: number };

const PING: SseFrame = Object.freeze({ event: 'ping', data: '{"type":"ping"}' });

/**
 * One Messages stream being written (see encodeMessagesStream): the prompt's input usage, the
 * content block open, the next block's index. Each engine event kind has its own step.
 */
export class MessagesStreamWriter {
  private input: AnthropicInputUsage;
  private open: OpenBlock | undefined;
  private nextIndex = 0;
  /** The block of each tool call, by the call's index. */
  private readonly toolBlocks = new Map<number, number>();

  constructor(
    private readonly options: MessagesStreamOptions,
    private readonly send: (frame: SseFrame) => void,
  ) {
    this.input = { input_tokens: options.inputTokens };
  }

  /** `message_start`, with the engine's split of the input tokens when its acceptance came first with one. */
  start(first: StreamEvent | undefined): void {
    const split = first?.type === 'accepted' ? first.usage : undefined;
    if (split !== undefined) this.input = toAnthropicInput(split);
    this.emit('message_start', {
      message: {
        id: this.options.id,
        type: 'message',
        role: 'assistant',
        model: this.options.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: anthropicUsage(this.input, 0),
      },
    });
  }

  write(event: StreamEvent): void {
    switch (event.type) {
      case 'accepted':
      case 'resuming':
      case 'ack':
        return;
      case 'heartbeat':
        return this.send(PING);
      case 'reasoning':
        if (event.text.length > 0) this.thinking(event.text);
        return;
      case 'text':
        if (event.text.length > 0) this.text(event.text);
        return;
      case 'tool_call':
        return this.toolUse(event);
      case 'done':
        return this.finish(event);
    }
  }

  /** `event: error`, and nothing after it. */
  fail(error: unknown): void {
    this.send({ event: 'error', data: JSON.stringify(toAnthropicErrorBody(asGatewayError(error))) });
  }

  private thinking(text: string): void {
    if (this.open?.kind !== 'thinking')
      this.openBlock(
        { kind: 'thinking', index: this.nextIndex++, text: '' },
        { type: 'thinking', thinking: '', signature: '' },
      );
    const block = this.open as Extract<OpenBlock, { kind: 'thinking' }>;
    block.text += text;
    this.emit('content_block_delta', { index: block.index, delta: { type: 'thinking_delta', thinking: text } });
  }

  private text(text: string): void {
    if (this.open?.kind !== 'text')
      this.openBlock({ kind: 'text', index: this.nextIndex++ }, { type: 'text', text: '' });
    this.emit('content_block_delta', { index: this.open!.index, delta: { type: 'text_delta', text } });
  }

  private toolUse(event: Extract<EngineEvent, { type: 'tool_call' }>): void {
    const blockIndex = this.toolBlocks.get(event.index) ?? this.openToolUse(event);
    // A piece of an earlier call (an upstream that interleaves calls) still goes to that
    // call's block, which the SDKs accumulate by index.
    if (event.arguments.length === 0) return;
    this.emit('content_block_delta', {
      index: blockIndex,
      delta: { type: 'input_json_delta', partial_json: event.arguments },
    });
  }

  private openToolUse(event: Extract<EngineEvent, { type: 'tool_call' }>): number {
    const blockIndex = this.nextIndex++;
    this.toolBlocks.set(event.index, blockIndex);
    this.openBlock(
      { kind: 'tool_use', index: blockIndex, toolIndex: event.index },
      {
        type: 'tool_use',
        id: toAnthropicToolUseId(event.id ?? `${this.options.id}_${event.index}`),
        name: event.name ?? '',
        input: {},
      },
    );
    return blockIndex;
  }

  private finish(done: DoneEvent): void {
    this.closeBlock();
    this.emit('message_delta', {
      delta: {
        stop_reason: toAnthropicStopReason(done.finishReason, done.stopSequence),
        stop_sequence: done.stopSequence ?? null,
      },
      usage: anthropicUsage(this.input, done.usage.completionTokens),
    });
    this.emit('message_stop', {});
  }

  private openBlock(block: OpenBlock, contentBlock: Record<string, unknown>): void {
    this.closeBlock();
    this.open = block;
    this.emit('content_block_start', { index: block.index, content_block: contentBlock });
  }

  /** A thinking block gets its `signature_delta` before it stops. */
  private closeBlock(): void {
    if (!this.open) return;
    if (this.open.kind === 'thinking') {
      this.emit('content_block_delta', {
        index: this.open.index,
        delta: { type: 'signature_delta', signature: thinkingSignature(this.open.text) },
      });
    }
    this.emit('content_block_stop', { index: this.open.index });
    this.open = undefined;
  }

  private emit(event: string, payload: Record<string, unknown>): void {
    this.send({ event, data: JSON.stringify({ type: event, ...payload }) });
  }
}
