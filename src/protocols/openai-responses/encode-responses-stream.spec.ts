import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { counterIds, payloadsOf, scripts, transcriptOf } from '../../../test/support/transcript.js';
import { EngineError } from '../../engine/engine-error.js';
import { encodeResponsesStream } from './encode-responses-stream.js';
import { responseEnvelope } from './response-object.js';
import type { ResponsesRequestDto } from './responses-request.dto.js';

const request = { model: 'stub', input: 'hi', tools: [{ type: 'function', name: 'get_weather' }] } as ResponsesRequestDto;
const encoder = () => encodeResponsesStream(responseEnvelope('resp_1', 1700000000, request), counterIds());
const golden = (name: string) => `./__golden__/${name}.sse`;

beforeAll(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date(1700000005_000));
});
afterAll(() => vi.useRealTimers());

function sequenceNumbers(text: string): number[] {
  return [...text.matchAll(/"sequence_number":(\d+)/g)].map((match) => Number(match[1]));
}

describe('encodeResponsesStream (golden transcripts)', () => {
  it('a message with in_progress heartbeats before it', async () => {
    const text = await transcriptOf(scripts.text(), encoder());
    await expect(text).toMatchFileSnapshot(golden('text'));
    expect(sequenceNumbers(text)).toEqual(sequenceNumbers(text).map((_, index) => index));
  });

  it('a reasoning item (reasoning_text family) before the message', async () => {
    await expect(await transcriptOf(scripts.reasoning(), encoder())).toMatchFileSnapshot(golden('reasoning'));
  });

  it('function calls with arguments deltas and done events carrying the name', async () => {
    await expect(await transcriptOf(scripts.toolCalls(), encoder())).toMatchFileSnapshot(golden('function-calls'));
  });

  it('response.incomplete on length', async () => {
    await expect(await transcriptOf(scripts.length(), encoder())).toMatchFileSnapshot(golden('incomplete'));
  });

  it('response.failed after a heartbeat, as the last event', async () => {
    const text = await transcriptOf(scripts.failureAfterHeartbeat(), encoder(), new EngineError('upstream', 'Upstream went away.'));
    await expect(text).toMatchFileSnapshot(golden('failed'));
    expect(text.trim().split('\n\n').at(-1)).toMatch(/^event: response\.failed\n/);
  });
});

describe('encodeResponsesStream with interleaved tool calls', () => {
  it('keeps one function_call item per call, and the final response has every call whole', async () => {
    const text = await transcriptOf(
      [
        { type: 'tool_call', index: 0, id: 'a', name: 'f', arguments: '{"x":' },
        { type: 'tool_call', index: 1, id: 'b', name: 'g', arguments: '{"y":' },
        { type: 'tool_call', index: 0, arguments: '1}' },
        { type: 'tool_call', index: 1, arguments: '2}' },
        { type: 'done', finishReason: 'tool_calls', usage: { promptTokens: 1, completionTokens: 4, cachedTokens: 0, reasoningTokens: 0 } },
      ],
      encoder(),
    );
    const events = payloadsOf(text);
    expect(events.filter((event) => event.type === 'response.output_item.added')).toHaveLength(2);
    const final = events.at(-1);
    expect(final.type).toBe('response.completed');
    expect(final.response.output.map((item: { name: string; call_id: string; arguments: string }) => [item.name, item.call_id, JSON.parse(item.arguments)])).toEqual([
      ['f', 'a', { x: 1 }],
      ['g', 'b', { y: 2 }],
    ]);
  });
});

describe('encodeResponsesStream endings', () => {
  const lastEvent = async (events: Parameters<typeof transcriptOf>[0], failure?: Error) => {
    const text = await transcriptOf(events, encoder(), failure);
    return payloadsOf(text).at(-1);
  };

  it('keeps the text streamed before a failure in the failed response', async () => {
    const failed = await lastEvent([{ type: 'text', text: 'Hello' }], new EngineError('upstream', 'gone'));
    expect(failed.type).toBe('response.failed');
    expect(failed.response.output).toEqual([
      { id: 'msg_1', type: 'message', role: 'assistant', status: 'incomplete', content: [{ type: 'output_text', text: 'Hello', annotations: [], logprobs: [] }] },
    ]);
  });

  it('ends a filtered answer as incomplete, for content_filter', async () => {
    const usage = { promptTokens: 1, completionTokens: 1, cachedTokens: 0, reasoningTokens: 0 };
    const filtered = await lastEvent([{ type: 'text', text: 'Hm' }, { type: 'done', finishReason: 'content_filter', usage }]);
    expect(filtered).toMatchObject({ type: 'response.incomplete', response: { status: 'incomplete', incomplete_details: { reason: 'content_filter' } } });
  });
});
