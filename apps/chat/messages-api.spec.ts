import { describe, expect, it } from 'vitest';
import { messagesApi } from './messages-api.js';
import { SseEventReader } from './sse-event-reader.js';

const read = (transcript: string) => new SseEventReader(messagesApi.createDecoder()).feed(transcript);
const frame = (type: string, fields: Record<string, unknown> = {}) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;
const messageStart = frame('message_start', {
  message: {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'slow',
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 5, output_tokens: 0 },
  },
});

describe('messagesApi', () => {
  it('sends max_tokens (1024 by default), the system prompt, the version header, and asks for thinking', () => {
    const request = messagesApi.buildRequest({
      model: 'slow',
      system: 'be brief',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(request).toEqual({
      path: '/v1/messages',
      headers: { 'anthropic-version': '2023-06-01' },
      body: {
        model: 'slow',
        max_tokens: 1024,
        system: 'be brief',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
        thinking: { type: 'adaptive' },
      },
    });
    expect(messagesApi.buildRequest({ model: 'slow', maxTokens: 7, messages: [] }).body.max_tokens).toBe(7);
  });

  it('decodes pings as heartbeats, thinking, text and tool_use blocks, and the cumulative usage', () => {
    const transcript =
      messageStart +
      frame('ping') +
      frame('ping') +
      frame('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }) +
      frame('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'let me see' } }) +
      frame('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'c2ln' } }) +
      frame('content_block_stop', { index: 0 }) +
      frame('content_block_start', { index: 1, content_block: { type: 'text', text: '' } }) +
      frame('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'Hello' } }) +
      frame('content_block_stop', { index: 1 }) +
      frame('content_block_start', {
        index: 2,
        content_block: { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} },
      }) +
      frame('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '{"city":' } }) +
      frame('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } }) +
      frame('content_block_stop', { index: 2 }) +
      frame('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 9 } }) +
      frame('message_stop');
    expect(read(frame('ping') + transcript)).toEqual([
      { type: 'heartbeat' },
      { type: 'opened' },
      { type: 'heartbeat' },
      { type: 'heartbeat' },
      { type: 'reasoning', text: 'let me see' },
      { type: 'text', text: 'Hello' },
      { type: 'tool_call_start', index: 2, id: 'toolu_1', name: 'get_weather' },
      { type: 'tool_call_args', index: 2, fragment: '{"city":' },
      { type: 'tool_call_args', index: 2, fragment: '"Paris"}' },
      { type: 'usage', usage: { promptTokens: 5, completionTokens: 9 } },
      { type: 'done', finishReason: 'tool_calls' },
    ]);
  });

  it('maps stop reasons and turns event: error into an error', () => {
    const ending = (reason: string) =>
      read(
        messageStart +
          frame('message_delta', { delta: { stop_reason: reason }, usage: { output_tokens: 1 } }) +
          frame('message_stop'),
      ).at(-1);
    expect(ending('end_turn')).toEqual({ type: 'done', finishReason: 'stop' });
    expect(ending('stop_sequence')).toEqual({ type: 'done', finishReason: 'stop' });
    expect(ending('max_tokens')).toEqual({ type: 'done', finishReason: 'length' });
    expect(read(frame('error', { error: { type: 'overloaded_error', message: 'Overloaded' } }))).toEqual([
      { type: 'error', message: 'Overloaded' },
    ]);
  });
});
