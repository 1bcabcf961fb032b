import type { DoneEvent, EngineEvent, TokenUsage } from '../../engine/engine-event.js';
import { countersOf, ZERO_USAGE } from '../../engine/engine-event.js';
import { asGatewayError } from '../../errors/gateway-error.js';
import type { StreamEvent } from '../../streaming/stream-event.js';
import type { SseFrame } from '../sse/sse-frame.js';
import { closeItem, partialItem, type OpenItem, type ToolCallItem } from './open-item.js';
import {
  messageItem,
  outputTextPart,
  reasoningItem,
  reasoningPart,
  summaryPart,
  toolCallIdPrefix,
  toolCallItem,
} from './response-items.js';
import { finalStatus, responseObject, type ResponseEnvelope } from './response-object.js';

/**
 * One Responses stream being written (see encodeResponsesStream): the sequence number, the output
 * items so far, the one open, and the latest counters. Each engine event kind has its own step.
 */
export class ResponsesStreamWriter {
  private sequence = 0;
  private usage: TokenUsage = ZERO_USAGE;
  private open: OpenItem | undefined;
  private readonly output: unknown[] = [];
  /** Each tool call's item, by the call's index; it outlives the item's `.done` (see toolCall). */
  private readonly calls = new Map<number, ToolCallItem>();

  constructor(
    private readonly envelope: ResponseEnvelope,
    private readonly newItemId: (prefix: string) => string,
    private readonly send: (frame: SseFrame) => void,
  ) {}

  start(): void {
    const initial = responseObject(this.envelope, 'in_progress', []);
    this.emit('response.created', { response: initial });
    this.emit('response.in_progress', { response: initial });
  }

  write(event: StreamEvent): void {
    if (event.type === 'heartbeat') return this.heartbeat();
    // The latest counters (an ack's, or an output piece's): what a failed response reports.
    this.usage = countersOf(event)?.usage ?? this.usage;
    switch (event.type) {
      case 'ack':
      case 'accepted':
      case 'resuming':
        return;
      case 'reasoning':
        if (event.text.length > 0) this.reasoning(event.text);
        return;
      case 'text':
        if (event.text.length > 0) this.text(event.text);
        return;
      case 'tool_call':
        return this.toolCall(event);
      case 'done':
        return this.finish(event);
    }
  }

  /** The stream failed: what was already streamed stays in the output (openai-node replaces its snapshot with it). */
  fail(error: unknown): void {
    if (this.open) this.output[this.open.outputIndex] = partialItem(this.open, this.envelope);
    this.emit('response.failed', {
      response: responseObject(this.envelope, 'failed', [...this.output], {
        usage: this.usage,
        error: asGatewayError(error),
      }),
    });
  }

  private heartbeat(): void {
    // Once output began (a continuation's prefill), the API's own `keepalive`: openai-node's
    // accumulator replaces its snapshot on `response.in_progress`, which has no open item's text.
    if (this.output.length > 0) return this.emit('keepalive', {});
    this.emit('response.in_progress', {
      response: responseObject(this.envelope, 'in_progress', [...this.output]),
    });
  }

  private reasoning(text: string): void {
    const summary = this.envelope.reasoning.summary;
    if (this.open?.kind !== 'reasoning') {
      const id = this.newItemId('rs_');
      const outputIndex = this.output.length;
      this.openItem(
        { kind: 'reasoning', outputIndex, id, text: '' },
        reasoningItem(id, undefined, 'in_progress'),
        reasoningPart(''),
      );
      if (summary)
        this.emit('response.reasoning_summary_part.added', {
          item_id: id,
          output_index: outputIndex,
          summary_index: 0,
          part: summaryPart(''),
        });
    }
    const item = this.open as Extract<OpenItem, { kind: 'reasoning' }>;
    item.text += text;
    const at = { item_id: item.id, output_index: item.outputIndex };
    this.emit('response.reasoning_text.delta', { ...at, content_index: 0, delta: text });
    if (summary) this.emit('response.reasoning_summary_text.delta', { ...at, summary_index: 0, delta: text });
  }

  private text(text: string): void {
    if (this.open?.kind !== 'message') {
      const id = this.newItemId('msg_');
      this.openItem(
        { kind: 'message', outputIndex: this.output.length, id, text: '' },
        messageItem(id, undefined, 'in_progress'),
        outputTextPart(''),
      );
    }
    const item = this.open as Extract<OpenItem, { kind: 'message' }>;
    item.text += text;
    this.emit('response.output_text.delta', {
      item_id: item.id,
      output_index: item.outputIndex,
      content_index: 0,
      delta: text,
      logprobs: [],
    });
  }

  private toolCall(event: Extract<EngineEvent, { type: 'tool_call' }>): void {
    const item = this.calls.get(event.index) ?? this.openToolCall(event);
    if (event.arguments.length === 0) return;
    item.text += event.arguments;
    if (item.tool?.kind !== 'custom') {
      this.emit('response.function_call_arguments.delta', {
        item_id: item.id,
        output_index: item.outputIndex,
        delta: event.arguments,
      });
    }
    // A piece of a call whose item was already closed (an upstream that interleaves calls):
    // the final response carries the whole arguments all the same.
    if (this.open !== item)
      this.output[item.outputIndex] = toolCallItem(item.tool, item.id, item.callId, item.name, item.text, 'completed');
  }

  private openToolCall(event: Extract<EngineEvent, { type: 'tool_call' }>): ToolCallItem {
    const name = event.name ?? '';
    const tool = this.envelope.tools.get(name);
    const id = this.newItemId(toolCallIdPrefix(tool));
    const callId = event.id ?? this.newItemId('call_');
    const item: ToolCallItem = { kind: 'tool_call', outputIndex: this.output.length, id, callId, name, tool, text: '' };
    this.calls.set(event.index, item);
    this.openItem(item, toolCallItem(tool, id, callId, name, '', 'in_progress'));
    return item;
  }

  private finish(done: DoneEvent): void {
    this.closeOpen();
    this.usage = done.usage;
    const status = finalStatus(done.finishReason);
    this.emit(status === 'incomplete' ? 'response.incomplete' : 'response.completed', {
      response: responseObject(this.envelope, status, [...this.output], {
        usage: this.usage,
        finishReason: done.finishReason,
      }),
    });
  }

  /** Closes the open item, if any, and opens `next`, with its first content part when it has one. */
  private openItem(next: OpenItem, item: unknown, part?: unknown): void {
    this.closeOpen();
    this.open = next;
    this.output[next.outputIndex] = item;
    this.emit('response.output_item.added', { output_index: next.outputIndex, item });
    if (part === undefined) return;
    this.emit('response.content_part.added', {
      item_id: next.id,
      output_index: next.outputIndex,
      content_index: 0,
      part,
    });
  }

  private closeOpen(): void {
    if (!this.open) return;
    const { outputIndex } = this.open;
    const { events, item } = closeItem(this.open, this.envelope);
    for (const [type, payload] of events) this.emit(type, payload);
    this.output[outputIndex] = item;
    this.emit('response.output_item.done', { output_index: outputIndex, item });
    this.open = undefined;
  }

  private emit(type: string, payload: Record<string, unknown>): void {
    this.send({ event: type, data: JSON.stringify({ type, sequence_number: this.sequence++, ...payload }) });
  }
}
