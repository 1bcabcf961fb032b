import { describe, expect, it } from 'vitest';
import { chatCompletionsApi } from './chat-completions-api.js';
import { SseEventReader } from './sse-event-reader.js';

const read = (transcript: string) => new SseEventReader(chatCompletionsApi.createDecoder()).feed(transcript);
const chunk = (rest: string) =>
  `data: {"id":"chatcmpl-7","object":"chat.completion.chunk","created":1767225600,"model":"slow","choices":${rest}}\n\n`;
const zeros = '"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}';
const timings =
  '"timings":{"cache_n":0,"prompt_n":3,"prompt_ms":801.2,"prompt_per_token_ms":267.1,"prompt_per_second":3.7,' +
  '"predicted_n":4,"predicted_ms":150.2,"predicted_per_token_ms":37.6,"predicted_per_second":26.6}';

// A Gantry stream with continuous usage and per-token timings: role chunk at admission, heartbeats
// during prefill (zeros, then the prefill ack's usage), then reasoning, text and a tool call.
const TRANSCRIPT =
  chunk(`[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],${zeros}`) +
  chunk(`[{"index":0,"delta":{},"finish_reason":null}],${zeros}`) +
  ': keep-alive\n\n' +
  chunk(
    '[{"index":0,"delta":{},"finish_reason":null}],"usage":{"prompt_tokens":3,"completion_tokens":0,"total_tokens":3},' +
      timings,
  ) +
  chunk('[{"index":0,"delta":{"reasoning_content":"hmm"},"logprobs":null,"finish_reason":null}]') +
  chunk('[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}]') +
  chunk(
    '[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},"logprobs":null,"finish_reason":null}]',
  ) +
  chunk(
    '[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"city\\":"}}]},"logprobs":null,"finish_reason":null}]',
  ) +
  chunk(
    '[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}',
  ) +
  chunk('[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7},' + timings) +
  'data: [DONE]\n\n';

describe('chatCompletionsApi', () => {
  it('asks for a stream with continuous usage and per-token timings, the system prompt first', () => {
    const request = chatCompletionsApi.buildRequest({
      model: 'slow',
      system: 'be brief',
      maxTokens: 64,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(request).toEqual({
      path: '/v1/chat/completions',
      headers: {},
      body: {
        model: 'slow',
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'hi' },
        ],
        stream: true,
        stream_options: { include_usage: true, continuous_usage_stats: true },
        timings_per_token: true,
        max_completion_tokens: 64,
      },
    });
  });

  it('decodes opening, heartbeats (empty-delta chunks and comments), output, usage, timings and the end', () => {
    const zeroUsage = { type: 'usage', usage: { promptTokens: 0, completionTokens: 0 } };
    expect(read(TRANSCRIPT)).toEqual([
      { type: 'opened' },
      zeroUsage,
      { type: 'heartbeat' },
      zeroUsage,
      { type: 'heartbeat' },
      { type: 'heartbeat' },
      { type: 'usage', usage: { promptTokens: 3, completionTokens: 0 } },
      { type: 'timings', timings: expect.objectContaining({ prompt_n: 3, predicted_per_second: 26.6 }) },
      { type: 'reasoning', text: 'hmm' },
      { type: 'text', text: 'Hello' },
      { type: 'tool_call_start', index: 0, id: 'call_1', name: 'get_weather' },
      { type: 'tool_call_args', index: 0, fragment: '{"city":' },
      { type: 'usage', usage: { promptTokens: 3, completionTokens: 4 } },
      { type: 'usage', usage: { promptTokens: 3, completionTokens: 4 } },
      { type: 'timings', timings: expect.objectContaining({ predicted_n: 4 }) },
      { type: 'done', finishReason: 'tool_calls' },
    ]);
  });

  it('gives the same events however the bytes are split', () => {
    const reader = new SseEventReader(chatCompletionsApi.createDecoder());
    const events = [...TRANSCRIPT].flatMap((character) => reader.feed(character));
    expect(events).toEqual(read(TRANSCRIPT));
  });

  it("reads vLLM's `reasoning` field as reasoning too", () => {
    const events = read(chunk('[{"index":0,"delta":{"reasoning":"step one"},"finish_reason":null}]'));
    expect(events).toEqual([{ type: 'reasoning', text: 'step one' }]);
  });

  it('turns an in-band error frame into an error event', () => {
    const events = read(
      chunk('[{"index":0,"delta":{},"finish_reason":null}]') +
        'data: {"error":{"message":"The upstream failed.","type":"upstream_error","param":null,"code":null}}\n\n' +
        'data: [DONE]\n\n',
    );
    expect(events).toEqual([
      { type: 'heartbeat' },
      { type: 'error', message: 'The upstream failed.' },
      { type: 'done', finishReason: 'stop' },
    ]);
  });
});
