import { describe, expect, it } from 'vitest';
import { responsesApi } from './responses-api.js';
import { SseEventReader } from './sse-event-reader.js';

const read = (transcript: string) => new SseEventReader(responsesApi.createDecoder()).feed(transcript);
let sequence = 0;
const frame = (type: string, fields: Record<string, unknown> = {}) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`;
const response = (status: string, extra: Record<string, unknown> = {}) => ({
  response: { id: 'resp_1', object: 'response', status, model: 'slow', output: [], ...extra },
});

describe('responsesApi', () => {
  it('sends the conversation as message items, the system prompt as instructions', () => {
    const request = responsesApi.buildRequest({
      model: 'slow',
      system: 'be brief',
      maxTokens: 32,
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
        { role: 'user', content: 'again' },
      ],
    });
    expect(request).toEqual({
      path: '/v1/responses',
      headers: {},
      body: {
        model: 'slow',
        input: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'hello' },
          { role: 'user', content: 'again' },
        ],
        instructions: 'be brief',
        max_output_tokens: 32,
        stream: true,
      },
    });
  });

  it('counts every in_progress after the opening one as a heartbeat, until output begins', () => {
    const transcript =
      frame('response.created', response('in_progress')) +
      frame('response.in_progress', response('in_progress')) +
      frame('response.in_progress', response('in_progress')) +
      frame('keepalive') +
      frame('response.in_progress', response('in_progress')) +
      frame('response.output_item.added', {
        output_index: 0,
        item: { id: 'msg_1', type: 'message', role: 'assistant', status: 'in_progress', content: [] },
      }) +
      frame('response.content_part.added', {
        item_id: 'msg_1',
        output_index: 0,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      }) +
      frame('response.output_text.delta', {
        item_id: 'msg_1',
        output_index: 0,
        content_index: 0,
        delta: 'Hello',
        logprobs: [],
      }) +
      frame('response.output_text.delta', {
        item_id: 'msg_1',
        output_index: 0,
        content_index: 0,
        delta: ' there',
        logprobs: [],
      }) +
      frame('response.output_text.done', {
        item_id: 'msg_1',
        output_index: 0,
        content_index: 0,
        text: 'Hello there',
        logprobs: [],
      }) +
      frame('response.output_item.done', {
        output_index: 0,
        item: { id: 'msg_1', type: 'message', status: 'completed' },
      }) +
      frame(
        'response.completed',
        response('completed', {
          output: [{ type: 'message' }],
          usage: { input_tokens: 4, output_tokens: 2, total_tokens: 6 },
        }),
      );
    expect(read(transcript)).toEqual([
      { type: 'opened' },
      { type: 'heartbeat' },
      { type: 'heartbeat' },
      { type: 'heartbeat' },
      { type: 'text', text: 'Hello' },
      { type: 'text', text: ' there' },
      { type: 'usage', usage: { promptTokens: 4, completionTokens: 2 } },
      { type: 'done', finishReason: 'stop' },
    ]);
  });

  it('reads reasoning once when llama.cpp sends both families, and streams function calls', () => {
    const transcript =
      frame('response.created', response('in_progress')) +
      frame('response.in_progress', response('in_progress')) +
      frame('response.output_item.added', { output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [] } }) +
      frame('response.reasoning_summary_text.delta', {
        item_id: 'rs_1',
        output_index: 0,
        summary_index: 0,
        delta: 'think',
      }) +
      frame('response.reasoning_text.delta', { item_id: 'rs_1', output_index: 0, content_index: 0, delta: 'think' }) +
      frame('response.output_item.added', {
        output_index: 1,
        item: {
          type: 'function_call',
          id: 'fc_1',
          call_id: 'call_1',
          name: 'get_weather',
          arguments: '',
          status: 'in_progress',
        },
      }) +
      frame('response.function_call_arguments.delta', { item_id: 'fc_1', output_index: 1, delta: '{"city":' }) +
      frame('response.function_call_arguments.delta', { item_id: 'fc_1', output_index: 1, delta: '"Paris"}' }) +
      frame('response.in_progress', response('in_progress')) +
      frame('response.function_call_arguments.done', {
        item_id: 'fc_1',
        output_index: 1,
        arguments: '{"city":"Paris"}',
        name: 'get_weather',
      }) +
      frame(
        'response.completed',
        response('completed', { output: [{ type: 'reasoning' }, { type: 'function_call' }] }),
      );
    expect(read(transcript)).toEqual([
      { type: 'opened' },
      { type: 'reasoning', text: 'think' },
      { type: 'tool_call_start', index: 1, id: 'call_1', name: 'get_weather' },
      { type: 'tool_call_args', index: 1, fragment: '{"city":' },
      { type: 'tool_call_args', index: 1, fragment: '"Paris"}' },
      { type: 'done', finishReason: 'tool_calls' },
    ]);
  });

  it('maps incomplete to length, queued to queued, and failed and error events to errors', () => {
    expect(read(frame('response.queued', response('queued')))).toEqual([{ type: 'queued' }]);
    expect(
      read(
        frame(
          'response.incomplete',
          response('incomplete', {
            incomplete_details: { reason: 'max_output_tokens' },
            usage: { input_tokens: 1, output_tokens: 8 },
          }),
        ),
      ),
    ).toEqual([
      { type: 'usage', usage: { promptTokens: 1, completionTokens: 8 } },
      { type: 'done', finishReason: 'length' },
    ]);
    expect(
      read(frame('response.failed', response('failed', { error: { code: 'server_error', message: 'engine died' } }))),
    ).toEqual([{ type: 'error', message: 'engine died' }]);
    expect(
      read(frame('error', { error: { type: 'server_error', code: null, message: 'nested', param: null } })),
    ).toEqual([{ type: 'error', message: 'nested' }]);
    expect(read(frame('error', { code: 'x', message: 'flat', param: null }))).toEqual([
      { type: 'error', message: 'flat' },
    ]);
  });
});
