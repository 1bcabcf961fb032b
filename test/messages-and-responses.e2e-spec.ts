import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, readJson, type RunningGateway } from './support/gateway.js';
import { failOnSdkWarnings, startSdkStubGateway } from './support/sdk-gateway.js';
import { postSse, type WireFrame } from './support/sse-client.js';

let gateway: RunningGateway;
let anthropic: Anthropic;
let openai: OpenAI;

beforeAll(async () => {
  gateway = await startSdkStubGateway();
  anthropic = new Anthropic({ baseURL: gateway.url, apiKey: 'test-key', maxRetries: 0 });
  openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'test-key', maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.close();
});
failOnSdkWarnings();

const weatherTool = {
  name: 'get_weather',
  description: 'Weather for a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } },
};
const events = (frames: WireFrame[]) => frames.flatMap((frame) => (frame.kind === 'event' ? [frame] : []));

describe('Anthropic Messages with @anthropic-ai/sdk', () => {
  it('messages.create answers with a text block, end_turn and usage', async () => {
    const message = await anthropic.messages.create({
      model: 'stub',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Hello Claude client' }],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'Hello Claude client' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage).toMatchObject({ input_tokens: 3, output_tokens: 3 });
    expect(message.id).toMatch(/^msg_/);
  });

  it('messages.stream yields a thinking block then text, and finalMessage() assembles them', async () => {
    const stream = anthropic.messages.stream({
      model: 'thinker',
      max_tokens: 100,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      system: 'You are terse.',
      messages: [{ role: 'user', content: 'the verdict' }],
    });
    let streamedText = '';
    stream.on('text', (text) => (streamedText += text));
    const message = await stream.finalMessage();
    expect(message.content.map((block) => block.type)).toEqual(['thinking', 'text']);
    expect(message.content[0]).toMatchObject({
      type: 'thinking',
      thinking: 'weigh it first',
      signature: expect.any(String),
    });
    expect(streamedText).toBe('the verdict');
    expect(message.usage).toMatchObject({ input_tokens: 5, output_tokens: 5 });
  });

  it('sends no thinking block without thinking enabled, streamed or whole; the usage counts the reasoning', async () => {
    const request = {
      model: 'thinker',
      max_tokens: 100,
      messages: [{ role: 'user' as const, content: 'the verdict' }],
    };
    const answers = [
      await anthropic.messages.create(request),
      await anthropic.messages.create({ ...request, thinking: { type: 'disabled' } }),
      await anthropic.messages.stream(request).finalMessage(),
      await anthropic.messages.stream({ ...request, thinking: { type: 'disabled' } }).finalMessage(),
    ];
    for (const message of answers) {
      expect(message.content).toEqual([{ type: 'text', text: 'the verdict' }]);
      expect(message.usage.output_tokens).toBe(5);
    }
    const adaptive = await anthropic.messages.create({
      ...request,
      thinking: { type: 'adaptive' },
    } as Anthropic.MessageCreateParamsNonStreaming);
    expect(adaptive.content.map((block) => block.type)).toEqual(['thinking', 'text']);
  });

  it('calls a tool with tool_choice, and takes the tool result back to a text answer', async () => {
    const request = {
      model: 'stub',
      max_tokens: 100,
      tools: [weatherTool],
      tool_choice: { type: 'tool' as const, name: 'get_weather' },
      messages: [{ role: 'user' as const, content: '{"city":"Lyon"}' }],
    };
    const first = await anthropic.messages.stream(request).finalMessage();
    expect(first.stop_reason).toBe('tool_use');
    const toolUse = first.content.find((block) => block.type === 'tool_use');
    expect(toolUse).toMatchObject({
      type: 'tool_use',
      name: 'get_weather',
      input: { city: 'Lyon' },
      id: expect.any(String),
    });

    const second = await anthropic.messages.create({
      ...request,
      messages: [
        ...request.messages,
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: (toolUse as { id: string }).id, content: 'rain in Lyon' }],
        },
      ],
    });
    expect(second.content).toEqual([{ type: 'text', text: 'rain in Lyon' }]);
    expect(second.stop_reason).toBe('end_turn');
  });

  it('reports max_tokens and stop_sequence stops', async () => {
    const limited = await anthropic.messages
      .stream({ model: 'stub', max_tokens: 2, messages: [{ role: 'user', content: 'a b c d' }] })
      .finalMessage();
    expect(limited).toMatchObject({ stop_reason: 'max_tokens', content: [{ type: 'text', text: 'a b' }] });
    const stopped = await anthropic.messages.create({
      model: 'stub',
      max_tokens: 50,
      stop_sequences: ['STOP'],
      messages: [{ role: 'user', content: 'go go STOP never' }],
    });
    expect(stopped).toMatchObject({
      stop_reason: 'stop_sequence',
      stop_sequence: 'STOP',
      content: [{ type: 'text', text: 'go go ' }],
    });
  });

  it('surfaces an engine failure after a ping as an error with its Anthropic type', async () => {
    const stream = anthropic.messages.stream({
      model: 'flaky',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'x y z' }],
    });
    const failure = await stream.finalMessage().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Anthropic.APIError);
    expect(JSON.stringify((failure as InstanceType<typeof Anthropic.APIError>).error)).toContain('overloaded_error');
  });

  it('answers errors before the stream in Anthropic shape: 400, 404, 529 when the queue is full', async () => {
    const invalid = await anthropic.messages
      .create({ model: 'stub', max_tokens: 0, messages: [{ role: 'user', content: 'x' }] })
      .catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(Anthropic.BadRequestError);
    expect((invalid as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error' },
    });

    const missing = await anthropic.messages
      .create({ model: 'nope', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
      .catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(Anthropic.NotFoundError);

    const model = gateway.registry.resolve('single');
    const release = { now: false };
    const holder = postSse(
      `${gateway.url}/v1/messages`,
      { model: 'single', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'hold' }] },
      { onFrame: () => release.now },
    );
    await eventually(() => model.admission.running === 1);
    const overloaded = await anthropic.messages
      .create({ model: 'single', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
      .catch((error: unknown) => error);
    expect(overloaded).toBeInstanceOf(Anthropic.APIError);
    expect((overloaded as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
    expect((overloaded as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      error: { type: 'overloaded_error' },
    });
    release.now = true;
    await holder;
    expect(await eventually(() => model.admission.running === 0)).toBe(true);
  });

  it('answers an oversized body with 413 request_too_large', async () => {
    const response = await fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'k' },
      body: JSON.stringify({
        model: 'stub',
        max_tokens: 5,
        messages: [{ role: 'user', content: 'x'.repeat(100_000) }],
      }),
    });
    expect(response.status).toBe(413);
    expect(await readJson(response)).toMatchObject({ type: 'error', error: { type: 'request_too_large' } });
  });

  it('counts tokens', async () => {
    const counted = await anthropic.messages.countTokens({
      model: 'stub',
      system: 'be nice',
      messages: [{ role: 'user', content: 'one two three' }],
    });
    expect(counted.input_tokens).toBe(5);
  });
});

describe('Chat Completions parity', () => {
  it('streams several tool calls in one turn, or one without parallel_tool_calls', async () => {
    const tools = [{ type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object' } } }];
    const ask = (parallel: boolean) =>
      openai.chat.completions
        .stream({
          model: 'stub',
          messages: [{ role: 'user', content: '[{"q":"a"},{"q":"b"}]' }],
          tools,
          tool_choice: 'required',
          parallel_tool_calls: parallel,
        })
        .finalChatCompletion();
    const parallel = await ask(true);
    const calls = parallel.choices[0].message.tool_calls ?? [];
    expect(calls.map((call) => call.type === 'function' && JSON.parse(call.function.arguments))).toEqual([
      { q: 'a' },
      { q: 'b' },
    ]);
    expect(new Set(calls.map((call) => call.id)).size).toBe(2);
    expect((await ask(false)).choices[0].message.tool_calls).toHaveLength(1);
  });
});

describe('the wire frames of the heartbeats', () => {
  it('Anthropic: message_start first, then at least 5 pings before the first block, none after', async () => {
    const exchange = await postSse(`${gateway.url}/v1/messages`, {
      model: 'slow',
      max_tokens: 20,
      stream: true,
      messages: [{ role: 'user', content: 'a b' }],
    });
    const names = events(exchange.frames).map((frame) => frame.event);
    expect(names[0]).toBe('message_start');
    const firstBlock = names.indexOf('content_block_start');
    expect(names.slice(1, firstBlock).every((name) => name === 'ping')).toBe(true);
    expect(firstBlock - 1).toBeGreaterThanOrEqual(5);
    expect(names.slice(firstBlock)).not.toContain('ping');
    expect(names.slice(-2)).toEqual(['message_delta', 'message_stop']);
    expect(events(exchange.frames).every((frame) => JSON.parse(frame.data).type === frame.event)).toBe(true);
  });

  it('Anthropic without thinking: the pings go on through reasoning the client is not shown', async () => {
    // The first reasoning token comes at 40 ms, before the first ping is due (100 ms); the answer after 400 ms.
    const body = { model: 'slow-thinker', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'a b' }] };
    const exchange = await postSse(`${gateway.url}/v1/messages`, body);
    const frames = events(exchange.frames);
    const names = frames.map((frame) => frame.event);
    const firstBlock = names.indexOf('content_block_start');
    expect(names.slice(1, firstBlock).filter((name) => name === 'ping').length).toBeGreaterThanOrEqual(2);
    const blocks = frames.flatMap((frame) =>
      frame.event === 'content_block_start' ? [JSON.parse(frame.data).content_block.type] : [],
    );
    expect(blocks).toEqual(['text']);
    expect(JSON.parse(frames.find((frame) => frame.event === 'message_delta')!.data).usage.output_tokens).toBe(12);
  });

  it('Responses: created, then in_progress beats until the first item; gapless sequence numbers; one id', async () => {
    const exchange = await postSse(`${gateway.url}/v1/responses`, { model: 'slow', stream: true, input: 'a b' });
    const payloads = events(exchange.frames).map((frame) => JSON.parse(frame.data));
    expect(payloads.map((payload) => payload.sequence_number)).toEqual(payloads.map((_, index) => index));
    expect(payloads[0].type).toBe('response.created');
    const firstItem = payloads.findIndex((payload) => payload.type === 'response.output_item.added');
    const beats = payloads.slice(1, firstItem);
    expect(beats.every((payload) => payload.type === 'response.in_progress')).toBe(true);
    expect(beats.length - 1).toBeGreaterThanOrEqual(5);
    expect(payloads.slice(firstItem).some((payload) => payload.type === 'response.in_progress')).toBe(false);
    const ids = new Set(payloads.flatMap((payload) => (payload.response ? [payload.response.id] : [])));
    expect(ids.size).toBe(1);
    expect(payloads.at(-1).type).toBe('response.completed');
    expect(exchange.frames.some((frame) => frame.kind === 'event' && frame.data === '[DONE]')).toBe(false);
  });
});
