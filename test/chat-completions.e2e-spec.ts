import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { type RunningGateway } from './support/gateway.js';
import { postSse, type WireFrame } from './support/sse-client.js';
import { ask, isHeartbeat, STUB_CHAT_MODELS, useStubChatGateway } from './support/stub-chat-gateway.js';

let gateway: RunningGateway;
let client: OpenAI;

useStubChatGateway((running) => ({ gateway, client } = running));

const chatUrl = () => `${gateway.url}/v1/chat/completions`;
const hasOutput = (chunk: Record<string, any>) => {
  const delta = chunk.choices?.[0]?.delta ?? {};
  return Boolean(delta.content) || Boolean(delta.reasoning_content) || (delta.tool_calls?.length ?? 0) > 0;
};

describe('POST /v1/chat/completions with the openai SDK', () => {
  it('answers a non-streaming request with content, finish reason and usage', async () => {
    const completion = await client.chat.completions.create({ model: 'stub', messages: ask('Hello from the SDK') });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0].message).toMatchObject({ role: 'assistant', content: 'Hello from the SDK' });
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(completion.usage).toEqual({ prompt_tokens: 4, completion_tokens: 4, total_tokens: 8 });
  });

  it('streams content chunks that the SDK accumulates, with a usage chunk', async () => {
    const stream = await client.chat.completions.create({
      model: 'stub',
      messages: ask('one two three'),
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined | null;
    const finishReasons: string[] = [];
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.choices[0]?.finish_reason) finishReasons.push(chunk.choices[0].finish_reason);
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('one two three');
    expect(finishReasons).toEqual(['stop']);
    expect(usage).toEqual({ prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 });
  });

  it('stops at max_tokens with finish reason length and honours stop strings', async () => {
    const limited = await client.chat.completions.create({ model: 'stub', messages: ask('a b c d e'), max_tokens: 2 });
    expect(limited.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: 'a b' } });
    const stopped = await client.chat.completions.create({
      model: 'stub',
      messages: ask('alpha beta END gamma'),
      stop: ['END'],
    });
    expect(stopped.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'alpha beta ' } });
  });

  it('streams reasoning as reasoning_content before the answer', async () => {
    const stream = await client.chat.completions.create({
      model: 'thinker',
      messages: ask('the answer'),
      stream: true,
    });
    let reasoning = '';
    let content = '';
    let contentSeenBeforeReasoning = false;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as { content?: string; reasoning_content?: string } | undefined;
      if (delta?.reasoning_content) {
        if (content) contentSeenBeforeReasoning = true;
        reasoning += delta.reasoning_content;
      }
      content += delta?.content ?? '';
    }
    expect(reasoning).toBe('first think then answer');
    expect(content).toBe('the answer');
    expect(contentSeenBeforeReasoning).toBe(false);
  });

  it('streams a tool call that the SDK stream helper assembles and parses', async () => {
    const runner = client.chat.completions.stream({
      model: 'stub',
      messages: ask('{"city":"Paris","days":3}'),
      tools: [{ type: 'function', function: { name: 'get_forecast', parameters: { type: 'object' } } }],
      tool_choice: 'required',
    });
    const final = await runner.finalChatCompletion();
    const call = final.choices[0].message.tool_calls?.[0];
    expect(final.choices[0].finish_reason).toBe('tool_calls');
    expect(call?.type).toBe('function');
    expect(call && call.type === 'function' && call.function.name).toBe('get_forecast');
    expect(call && call.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ city: 'Paris', days: 3 });
  });

  it('round-trips a tool result to a text answer', async () => {
    const completion = await client.chat.completions.create({
      model: 'stub',
      messages: [
        { role: 'user', content: '{"city":"Paris"}' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_9', type: 'function', function: { name: 'get_forecast', arguments: '{"city":"Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_9', content: 'sunny and 21 C' },
      ],
      tools: [{ type: 'function', function: { name: 'get_forecast' } }],
      tool_choice: 'required',
    });
    expect(completion.choices[0].message.content).toBe('sunny and 21 C');
  });

  it('reports an engine failure after a heartbeat as an APIError from the stream', async () => {
    const stream = await client.chat.completions.create({ model: 'flaky', messages: ask('x y z'), stream: true });
    const seen: string[] = [];
    const failure = await (async () => {
      try {
        for await (const chunk of stream) seen.push(chunk.choices[0]?.delta.content ?? '');
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as Error).message).toMatch(/stub engine failed after 1 tokens/);
    expect(seen.join('')).toBe('x');
  });

  it('lists the configured models', async () => {
    const models = [];
    for await (const model of client.models.list()) models.push(model.id);
    expect(models).toEqual(STUB_CHAT_MODELS.map((model) => model.name));
  });
});

describe('the wire frames of a stream', () => {
  it('sends the role chunk at once, heartbeats during prefill, and none after the first output', async () => {
    const exchange = await postSse(chatUrl(), { model: 'slow', messages: ask('alpha beta'), stream: true });
    expect(exchange.status).toBe(200);
    expect(exchange.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const chunks = exchange.json();
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
    expect(exchange.frames[0].at).toBeLessThan(900);
    const firstOutput = chunks.findIndex(hasOutput);
    expect(firstOutput).toBeGreaterThan(0);
    const beforeOutput = chunks.slice(1, firstOutput);
    expect(beforeOutput.filter(isHeartbeat).length).toBeGreaterThanOrEqual(5);
    expect(beforeOutput.every(isHeartbeat)).toBe(true);
    // A heartbeat is a chunk like any other: its choice says `logprobs: null` too.
    expect(beforeOutput.every((chunk) => chunk.choices[0].logprobs === null && 'logprobs' in chunk.choices[0])).toBe(
      true,
    );
    expect(chunks.slice(firstOutput).filter(isHeartbeat)).toEqual([]);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('alpha beta');

    const identities = new Set(chunks.map((chunk) => `${chunk.id}|${chunk.model}|${chunk.created}|${chunk.object}`));
    expect(identities.size).toBe(1);
    expect([...identities][0]).toMatch(/^chatcmpl-\w+\|slow\|\d+\|chat\.completion\.chunk$/);
    expect(exchange.frames.at(-1)).toMatchObject({ kind: 'event', data: '[DONE]' });
  });

  it('puts usage on every chunk after the role chunk with continuous_usage_stats: zeros until the first ack', async () => {
    const exchange = await postSse(chatUrl(), {
      model: 'slow',
      messages: ask('alpha beta'),
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: true },
    });
    const [roleChunk, ...chunks] = exchange.json();
    // The role chunk leaves before prefill, before anything is measured.
    expect(roleChunk.choices[0].delta).toEqual({ role: 'assistant', content: '' });
    expect(roleChunk).not.toHaveProperty('usage');
    expect(chunks.every((chunk) => chunk.usage !== undefined)).toBe(true);
    const heartbeats = chunks.filter(isHeartbeat);
    const zeroBeats = heartbeats.filter((chunk) => chunk.usage.prompt_tokens === 0);
    const prefilledBeats = heartbeats.filter((chunk) => chunk.usage.prompt_tokens === 2);
    expect(zeroBeats.length).toBeGreaterThanOrEqual(5);
    expect(zeroBeats.every((chunk) => chunk.usage.total_tokens === 0)).toBe(true);
    expect(prefilledBeats.length).toBeGreaterThanOrEqual(1);
    // Counters never go back: once the prompt is counted, every later chunk has it.
    const firstCounted = chunks.findIndex((chunk) => chunk.usage.prompt_tokens > 0);
    expect(chunks.slice(firstCounted).every((chunk) => chunk.usage.prompt_tokens === 2)).toBe(true);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({ prompt_tokens: 2, completion_tokens: 2, total_tokens: 4 });
  });

  it('puts the latest timings on every chunk after the first ack with timings_per_token', async () => {
    const exchange = await postSse(chatUrl(), {
      model: 'slow',
      messages: ask('alpha beta'),
      stream: true,
      timings_per_token: true,
    });
    const chunks = exchange.json();
    const firstTimed = chunks.findIndex((chunk) => chunk.timings !== undefined);
    expect(firstTimed).toBeGreaterThanOrEqual(6);
    expect(chunks.slice(0, firstTimed).every((chunk) => chunk.timings === undefined)).toBe(true);
    expect(chunks.slice(firstTimed).every((chunk) => chunk.timings !== undefined)).toBe(true);
    const first = chunks[firstTimed].timings;
    expect(first.prompt_n).toBe(2);
    expect(first.prompt_ms).toBeGreaterThanOrEqual(900);
    expect(first.predicted_n).toBe(0);
    const last = chunks.at(-1)!.timings;
    expect(last.predicted_n).toBe(2);
    expect(last.predicted_ms).toBeGreaterThan(0);
    expect(last.predicted_per_second).toBeCloseTo((1000 / last.predicted_ms) * 2, 6);
  });

  it('frames an engine failure after a heartbeat as an error chunk followed by [DONE]', async () => {
    const exchange = await postSse(chatUrl(), { model: 'flaky', messages: ask('x y z'), stream: true });
    const events = exchange.frames.filter(
      (frame): frame is Extract<WireFrame, { kind: 'event' }> => frame.kind === 'event',
    );
    expect(events.slice(-2).map((frame) => frame.data.startsWith('{"error"') || frame.data === '[DONE]')).toEqual([
      true,
      true,
    ]);
    expect(JSON.parse(events.at(-2)!.data).error).toMatchObject({
      type: 'upstream_error',
      message: expect.any(String),
    });
    expect(exchange.json().filter(isHeartbeat).length).toBeGreaterThanOrEqual(1);
  });
});
