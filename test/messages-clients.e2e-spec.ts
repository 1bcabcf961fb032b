import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../apps/mock-upstream/mock-upstream.js';
import { writeTinyGguf } from '../scripts/tiny-gguf/write-tiny-gguf.js';
import { estimatePromptTokens } from '../src/engine/token-estimate.js';
import { readJson, startGateway, type RunningGateway } from './support/gateway.js';
import { postSse, type SseExchange } from './support/sse-client.js';

/** Real clients on their defaults: Claude Code, LangChain's ChatAnthropic, the SDKs' model calls. */

const ANTHROPIC_HEADERS = { 'anthropic-version': '2023-06-01', 'x-api-key': 'sk-unused' };
const CLAUDE_CODE_HEADERS = {
  ...ANTHROPIC_HEADERS,
  'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14',
};
const bashTool = {
  name: 'Bash',
  description: 'Runs a shell command.',
  input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
};
const weatherTool = {
  name: 'get_weather',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } },
};

let dir: string;
let mock: MockUpstream;
/** A second upstream, told to answer /tokenize with 404 (what an upstream without it does). */
let noTokenizer: MockUpstream;
let contextUpstream: Server;
let gateway: RunningGateway;
let anthropic: Anthropic;
let openai: OpenAI;

/** An upstream that refuses every chat request as vLLM refuses a prompt longer than the model's context. */
async function contextRefusingUpstream(): Promise<Server> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const body = JSON.stringify({
        error: {
          message:
            "This model's maximum context length is 4096 tokens. However, you requested 5120 tokens (4608 in the messages, 512 in the completion). Please reduce the length of the messages or completion.",
          type: 'BadRequestError',
          param: null,
          code: 400,
        },
      });
      response.writeHead(400, { 'content-type': 'application/json' }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gantry-clients-'));
  const modelPath = join(dir, 'tiny.gguf');
  writeTinyGguf(modelPath);
  [mock, noTokenizer] = await Promise.all([
    startMockUpstream({ servedModel: 'org/served-model' }),
    startMockUpstream({ servedModel: 'org/served-model' }),
  ]);
  contextUpstream = await contextRefusingUpstream();
  const vllm = { engine: 'http', upstreams: [mock.url], upstreamModel: 'org/served-model', healthCheckIntervalMs: 0 };
  gateway = await startGateway({
    keepalive: { mode: 'chunks', intervalMs: 100 },
    models: [
      { name: 'stub', engine: 'stub' },
      { name: 'org/stub', engine: 'stub' },
      { name: 'vllm', ...vllm },
      { name: 'vllm-no-tokenize', ...vllm, upstreams: [noTokenizer.url], headers: { 'x-mock-tokenize': 'absent' } },
      { name: 'vllm-slow-tokenize', ...vllm, headers: { 'x-mock-tokenize-delay-ms': '3000' } },
      {
        name: 'vllm-small',
        engine: 'http',
        upstreams: [`http://127.0.0.1:${(contextUpstream.address() as AddressInfo).port}/v1`],
        healthCheckIntervalMs: 0,
      },
      { name: 'tiny', engine: 'llama', modelPath, threads: 1, sequences: 1, contextSize: 1024, gpu: false },
      { name: 'tiny-context', engine: 'llama', modelPath, threads: 1, sequences: 1, contextSize: 64, gpu: false },
    ],
  });
  anthropic = new Anthropic({ baseURL: gateway.url, apiKey: 'sk-unused', maxRetries: 0 });
  openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'sk-unused', maxRetries: 0 });
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([mock?.close(), noTokenizer?.close()]);
  await new Promise((resolve) => contextUpstream?.close(resolve));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const messagesUrl = (query = '') => `${gateway.url}/v1/messages${query}`;
const eventsOf = (exchange: SseExchange) =>
  exchange.frames.flatMap((frame) =>
    frame.kind === 'event' ? [{ event: frame.event, data: JSON.parse(frame.data), at: frame.at }] : [],
  );
const payload = (exchange: SseExchange, event: string) =>
  eventsOf(exchange).find((frame) => frame.event === event)?.data;
const textOf = (exchange: SseExchange) =>
  eventsOf(exchange)
    .filter((frame) => frame.event === 'content_block_delta' && frame.data.delta.type === 'text_delta')
    .map((frame) => frame.data.delta.text)
    .join('');
const countTokens = async (body: Record<string, unknown>) =>
  (
    await readJson(
      await fetch(`${gateway.url}/v1/messages/count_tokens?beta=true`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...CLAUDE_CODE_HEADERS },
        body: JSON.stringify(body),
      }),
    )
  ).input_tokens as number;

/** What Claude Code 2.1 sends for `claude -p "say hi"`, trimmed: cached system blocks, tools, a system message mid-conversation. */
const claudeCodeBody = (model: string) => ({
  model,
  max_tokens: 32000,
  stream: true,
  temperature: 1,
  metadata: { user_id: 'user_abc_account__session_123' },
  system: [
    { type: 'text', text: 'You are Claude Code, an interactive CLI.', cache_control: { type: 'ephemeral' } },
    { type: 'text', text: 'Be concise.' },
  ],
  tools: [bashTool],
  messages: [
    { role: 'user', content: [{ type: 'text', text: '<system-reminder>Context: a repo.</system-reminder>' }] },
    { role: 'system', content: [{ type: 'text', text: 'The user is in plan mode.' }] },
    { role: 'user', content: [{ type: 'text', text: 'say hi', cache_control: { type: 'ephemeral' } }] },
  ],
});

describe('Claude Code on its defaults', () => {
  it('streams an answer to /v1/messages?beta=true with anthropic-beta, tools and a system message mid-conversation', async () => {
    const exchange = await postSse(messagesUrl('?beta=true'), claudeCodeBody('stub'), { headers: CLAUDE_CODE_HEADERS });
    expect(exchange.status).toBe(200);
    const names = eventsOf(exchange).map((frame) => frame.event);
    expect(names[0]).toBe('message_start');
    expect(names.at(-1)).toBe('message_stop');
    expect(textOf(exchange)).toBe('say hi');
    expect(payload(exchange, 'message_delta').delta.stop_reason).toBe('end_turn');
  });

  it('accepts a system message whose content is a plain string, and counts it like the others', async () => {
    const body = {
      model: 'stub',
      messages: [
        { role: 'user', content: 'one two' },
        { role: 'system', content: 'three four five' },
        { role: 'user', content: 'six' },
      ],
    };
    expect(await countTokens(body)).toBe(6);
    const message = await anthropic.messages.create({
      ...body,
      max_tokens: 10,
    } as Anthropic.MessageCreateParamsNonStreaming);
    expect(message.content).toEqual([{ type: 'text', text: 'six' }]);
    expect(message.usage.input_tokens).toBe(6);
  });

  it('refuses a system message with a non-text block, naming the field', async () => {
    const response = await fetch(messagesUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...ANTHROPIC_HEADERS },
      body: JSON.stringify({
        model: 'stub',
        max_tokens: 10,
        messages: [
          { role: 'user', content: 'x' },
          { role: 'system', content: [{ type: 'tool_result', tool_use_id: 'a' }] },
        ],
      }),
    });
    expect(response.status).toBe(400);
    const body = await readJson(response);
    expect(body).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringMatching(/messages\[1\]\.content/) },
    });
  });

  it('refuses a conversation of system messages only: there is nothing to answer', async () => {
    const response = await fetch(messagesUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...ANTHROPIC_HEADERS },
      body: JSON.stringify({ model: 'stub', max_tokens: 10, messages: [{ role: 'system', content: 'x' }] }),
    });
    expect(response.status).toBe(400);
    expect((await readJson(response)).error).toMatchObject({
      type: 'invalid_request_error',
      message: expect.stringMatching(/^messages /),
    });
  });

  it('gives the engine the mid-conversation system message at its place', async () => {
    const exchange = await postSse(messagesUrl('?beta=true'), claudeCodeBody('vllm'), { headers: CLAUDE_CODE_HEADERS });
    expect(exchange.status).toBe(200);
    expect(textOf(exchange)).toBe('say hi');
    const sent = mock.state.received.filter((request) => request.path.endsWith('/chat/completions')).at(-1)!.body;
    expect(
      (sent.messages as Array<{ role: string; content: string }>).map((message) => [message.role, message.content]),
    ).toEqual([
      ['system', 'You are Claude Code, an interactive CLI.\nBe concise.'],
      ['user', '<system-reminder>Context: a repo.</system-reminder>'],
      ['system', 'The user is in plan mode.'],
      ['user', 'say hi'],
    ]);
  });
});

describe('message_start carries the prompt’s input tokens (LangChain reads them only there)', () => {
  it('stub: the exact count at once, equal to count_tokens and to message_delta', async () => {
    const body = claudeCodeBody('stub');
    const exchange = await postSse(messagesUrl('?beta=true'), body, { headers: CLAUDE_CODE_HEADERS });
    const counted = await countTokens(body);
    expect(counted).toBe(20);
    expect(payload(exchange, 'message_start').message.usage).toEqual({ input_tokens: counted, output_tokens: 0 });
    expect(payload(exchange, 'message_delta').usage).toMatchObject({ input_tokens: counted, output_tokens: 2 });
  });

  it('stub, through the SDK stream: the message_start event and the final message agree', async () => {
    const stream = anthropic.messages.stream({
      model: 'stub',
      max_tokens: 20,
      messages: [{ role: 'user', content: 'alpha beta gamma' }],
    });
    const starts: number[] = [];
    stream.on('streamEvent', (event) => {
      if (event.type === 'message_start') starts.push(event.message.usage.input_tokens);
    });
    const message = await stream.finalMessage();
    expect(starts).toEqual([3]);
    expect(message.usage.input_tokens).toBe(3);
  });

  it('llama: the exact count of the rendered template, equal to count_tokens and to what the engine reports', async () => {
    const body = {
      model: 'tiny',
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Count these words please' }],
    };
    const exchange = await postSse(
      messagesUrl(),
      { ...body, max_tokens: 2, stream: true },
      { headers: ANTHROPIC_HEADERS },
    );
    const counted = await countTokens(body);
    expect(counted).toBeGreaterThan(5);
    expect(payload(exchange, 'message_start').message.usage.input_tokens).toBe(counted);
    const final = payload(exchange, 'message_delta').usage;
    expect(final.input_tokens + (final.cache_read_input_tokens ?? 0)).toBe(counted);
  });

  it('HTTP engine: the upstream’s own count from its /tokenize, asked with the chat messages', async () => {
    const text = 'Hello there general Kenobi';
    const exchange = await postSse(
      messagesUrl(),
      { model: 'vllm', max_tokens: 20, stream: true, messages: [{ role: 'user', content: text }] },
      { headers: ANTHROPIC_HEADERS },
    );
    // The mock counts words; the gateway's estimate (a token per ~4 characters) would say 7.
    expect(payload(exchange, 'message_start').message.usage.input_tokens).toBe(4);
    expect(payload(exchange, 'message_delta').usage.input_tokens).toBe(4);
    const tokenize = mock.state.received.filter((request) => request.path === '/tokenize').at(-1)!;
    expect(tokenize.body).toMatchObject({
      model: 'org/served-model',
      messages: [{ role: 'user', content: text }],
      add_generation_prompt: true,
    });
  });

  it('HTTP engine: the estimate when the upstream has no /tokenize', async () => {
    const text = 'Hello there general Kenobi';
    const exchange = await postSse(
      messagesUrl(),
      { model: 'vllm-no-tokenize', max_tokens: 20, stream: true, messages: [{ role: 'user', content: text }] },
      { headers: ANTHROPIC_HEADERS },
    );
    const expected = estimatePromptTokens({
      model: 'x',
      messages: [{ role: 'user', content: [{ type: 'text', text }] }],
      tools: [],
      toolChoice: 'auto',
      parallelToolCalls: true,
      sampling: { stop: [] },
    });
    expect(expected).toBe(7);
    expect(payload(exchange, 'message_start').message.usage.input_tokens).toBe(expected);
    expect(textOf(exchange)).toBe(text);
    expect(noTokenizer.state.received.filter((request) => request.path === '/tokenize')).toHaveLength(1);
  });

  it('HTTP engine: the estimate, without waiting, when the upstream’s /tokenize is slow', async () => {
    const exchange = await postSse(
      messagesUrl(),
      {
        model: 'vllm-slow-tokenize',
        max_tokens: 20,
        stream: true,
        messages: [{ role: 'user', content: 'Hello there general Kenobi' }],
      },
      { headers: ANTHROPIC_HEADERS },
    );
    const start = eventsOf(exchange)[0];
    expect(start.event).toBe('message_start');
    expect(start.data.message.usage.input_tokens).toBe(7);
    // The tokenizer answers after 3 s; the count gives up after 250 ms.
    expect(start.at).toBeLessThan(2000);
  });
});

describe('tool_use ids', () => {
  const askWeather = {
    model: 'stub',
    max_tokens: 100,
    tools: [weatherTool],
    tool_choice: { type: 'tool' as const, name: 'get_weather' },
  };

  it('look like Anthropic’s, streamed or not, and come back to the engine as its own ids', async () => {
    const first = await anthropic.messages.create({
      ...askWeather,
      messages: [{ role: 'user', content: '{"city":"Lyon"}' }],
    });
    const toolUse = first.content.find((block) => block.type === 'tool_use')!;
    expect(toolUse.id).toMatch(/^toolu_01[0-9A-Za-z]{20,}$/);
    const streamed = await anthropic.messages
      .stream({ ...askWeather, messages: [{ role: 'user', content: '{"city":"Oslo"}' }] })
      .finalMessage();
    expect(streamed.content.find((block) => block.type === 'tool_use')!.id).toMatch(/^toolu_01[0-9A-Za-z]{20,}$/);

    const second = await anthropic.messages.create({
      ...askWeather,
      tool_choice: { type: 'auto' },
      messages: [
        { role: 'user', content: '{"city":"Lyon"}' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: 'sunny and warm' }] },
      ],
    });
    expect(second.content).toEqual([{ type: 'text', text: 'sunny and warm' }]);
  });

  it('an upstream’s call id goes out as a toolu_ id and comes back unchanged to the upstream', async () => {
    const request = { ...askWeather, model: 'vllm', messages: [{ role: 'user' as const, content: '{"city":"Lyon"}' }] };
    const first = await anthropic.messages.create(request);
    const toolUse = first.content.find((block) => block.type === 'tool_use')!;
    expect(toolUse.id).toMatch(/^toolu_01[0-9A-Za-z]+$/);
    await anthropic.messages.create({
      ...request,
      tool_choice: { type: 'auto' },
      messages: [
        ...request.messages,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: 'sunny' }] },
      ],
    });
    const sent = mock.state.received.filter((entry) => entry.path.endsWith('/chat/completions')).at(-1)!.body
      .messages as Array<Record<string, any>>;
    const upstreamId = sent[1].tool_calls[0].id;
    expect(upstreamId).toMatch(/^chatcmpl-tool-mock\d+$/);
    expect(sent[2]).toMatchObject({ role: 'tool', tool_call_id: upstreamId });
  });

  it('passes ids it did not make (another gateway’s, Anthropic’s own) through unchanged', async () => {
    const foreign = 'toolu_01A09q90qw90lq917835lq9';
    await anthropic.messages.create({
      ...askWeather,
      model: 'vllm',
      tool_choice: { type: 'auto' },
      messages: [
        { role: 'user', content: 'weather?' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: foreign, name: 'get_weather', input: { city: 'Lyon' } }],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: foreign, content: 'rain' }] },
      ],
    });
    const sent = mock.state.received.filter((entry) => entry.path.endsWith('/chat/completions')).at(-1)!.body
      .messages as Array<Record<string, any>>;
    expect(sent[1].tool_calls[0].id).toBe(foreign);
    expect(sent[2].tool_call_id).toBe(foreign);
  });
});

describe('GET /v1/models in the client’s dialect', () => {
  const names = [
    'stub',
    'org/stub',
    'vllm',
    'vllm-no-tokenize',
    'vllm-slow-tokenize',
    'vllm-small',
    'tiny',
    'tiny-context',
  ];

  it('answers Anthropic’s list shape to a request with anthropic-version, paged as the SDK pages it', async () => {
    const raw = await readJson(await fetch(`${gateway.url}/v1/models`, { headers: ANTHROPIC_HEADERS }));
    expect(raw).toMatchObject({ has_more: false, first_id: 'stub', last_id: 'tiny-context' });
    expect(raw.data[0]).toEqual({
      type: 'model',
      id: 'stub',
      display_name: 'stub',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });
    const listed: string[] = [];
    for await (const model of anthropic.models.list({ limit: 3 })) listed.push(model.id);
    expect(listed).toEqual(names);
    const page = await readJson(
      await fetch(`${gateway.url}/v1/models?limit=2&after_id=stub`, { headers: ANTHROPIC_HEADERS }),
    );
    expect(page).toMatchObject({ has_more: true, first_id: 'org/stub', last_id: 'vllm' });
  });

  it('answers OpenAI’s list shape otherwise', async () => {
    const raw = await readJson(await fetch(`${gateway.url}/v1/models`));
    expect(raw.object).toBe('list');
    expect(raw.data[0]).toEqual({
      id: 'stub',
      object: 'model',
      created: expect.any(Number),
      owned_by: 'gantry',
      apis: ['chat', 'responses', 'messages', 'completions', 'embeddings'],
    });
    const listed: string[] = [];
    for await (const model of openai.models.list()) listed.push(model.id);
    expect(listed).toEqual(names);
  });

  it('retrieves one model in either shape, a name with a slash included', async () => {
    expect(await anthropic.models.retrieve('org/stub')).toMatchObject({
      type: 'model',
      id: 'org/stub',
      display_name: 'org/stub',
    });
    expect(await openai.models.retrieve('org/stub')).toEqual({
      id: 'org/stub',
      object: 'model',
      created: expect.any(Number),
      owned_by: 'gantry',
      apis: expect.arrayContaining(['chat']),
    });
  });

  it('answers an unknown model with 404 in the client’s dialect', async () => {
    const anthropicMissing = await anthropic.models.retrieve('claude-nope').catch((error: unknown) => error);
    expect(anthropicMissing).toBeInstanceOf(Anthropic.NotFoundError);
    expect((anthropicMissing as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({
      type: 'error',
      error: { type: 'not_found_error' },
    });
    const openaiMissing = await openai.models.retrieve('gpt-nope').catch((error: unknown) => error);
    expect(openaiMissing).toBeInstanceOf(OpenAI.NotFoundError);
    expect((openaiMissing as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({
      type: 'invalid_request_error',
      code: 'model_not_found',
    });
  });
});

describe('the same refusal in every API', () => {
  it('an unknown model: OpenAI’s 404 invalid_request_error model_not_found, Anthropic’s 404 not_found_error', async () => {
    const chat = await openai.chat.completions
      .create({ model: 'gpt-nope', messages: [{ role: 'user', content: 'x' }] })
      .catch((error: unknown) => error);
    expect(chat).toBeInstanceOf(OpenAI.NotFoundError);
    expect((chat as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({
      type: 'invalid_request_error',
      code: 'model_not_found',
      param: 'model',
    });
    const messages = await anthropic.messages
      .create({ model: 'claude-nope', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
      .catch((error: unknown) => error);
    expect(messages).toBeInstanceOf(Anthropic.NotFoundError);
    expect((messages as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({
      type: 'error',
      error: { type: 'not_found_error' },
    });
    const streamed = await postSse(
      messagesUrl('?beta=true'),
      { model: 'claude-nope', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'x' }] },
      { headers: CLAUDE_CODE_HEADERS },
    );
    expect(streamed.status).toBe(404);
  });

  const longPrompt = Array.from({ length: 300 }, (_, index) => `word${index}`).join(' ');

  it('a prompt beyond the llama engine’s context: context_length_exceeded for chat, “prompt is too long” for messages', async () => {
    const chat = await openai.chat.completions
      .create({ model: 'tiny-context', messages: [{ role: 'user', content: longPrompt }] })
      .catch((error: unknown) => error);
    expect(chat).toBeInstanceOf(OpenAI.BadRequestError);
    expect((chat as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      type: 'invalid_request_error',
      code: 'context_length_exceeded',
      param: 'messages',
      message: expect.stringMatching(
        /^This model's maximum context length is \d+ tokens\. However, your messages resulted in \d+ tokens/,
      ),
    });
    // llama.cpp rounds the context up (64 asked, 256 held); the prompt is longer still.
    const [context, prompt] = (
      (chat as InstanceType<typeof OpenAI.BadRequestError>).error as { message: string }
    ).message
      .match(/\d+/g)!
      .map(Number);
    expect(prompt).toBeGreaterThan(context);
    // A stream is refused the same way: its head waits until the engine took the prompt.
    const chatStream = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny-context', stream: true, messages: [{ role: 'user', content: longPrompt }] }),
    });
    expect(chatStream.status).toBe(400);
    expect(((await chatStream.json()) as { error: unknown }).error).toMatchObject({
      code: 'context_length_exceeded',
      type: 'invalid_request_error',
    });

    const message = await anthropic.messages
      .create({ model: 'tiny-context', max_tokens: 5, messages: [{ role: 'user', content: longPrompt }] })
      .catch((error: unknown) => error);
    expect(message).toBeInstanceOf(Anthropic.BadRequestError);
    expect((message as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: `prompt is too long: ${prompt} tokens > ${context} maximum` },
    });
    const messageStream = await anthropic.messages
      .create({ model: 'tiny-context', max_tokens: 5, stream: true, messages: [{ role: 'user', content: longPrompt }] })
      .catch((error: unknown) => error);
    expect(messageStream).toBeInstanceOf(Anthropic.BadRequestError);
    expect((messageStream as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: `prompt is too long: ${prompt} tokens > ${context} maximum` },
    });
  });

  it('a prompt beyond an upstream’s context, as vLLM refuses it: the same errors', async () => {
    const chat = await openai.chat.completions
      .create({ model: 'vllm-small', messages: [{ role: 'user', content: 'x' }] })
      .catch((error: unknown) => error);
    expect(chat).toBeInstanceOf(OpenAI.BadRequestError);
    expect((chat as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      code: 'context_length_exceeded',
      message:
        "This model's maximum context length is 4096 tokens. However, your messages resulted in 4608 tokens. Please reduce the length of the messages.",
    });
    const message = await anthropic.messages
      .create({ model: 'vllm-small', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
      .catch((error: unknown) => error);
    expect((message as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      error: { type: 'invalid_request_error', message: 'prompt is too long: 4608 tokens > 4096 maximum' },
    });
  });
});
