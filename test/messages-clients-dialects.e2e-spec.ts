import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MockUpstream } from '../apps/mock-upstream/mock-upstream.js';
import { readJson, type RunningGateway } from './support/gateway.js';
import { postSse } from './support/sse-client.js';
import {
  ANTHROPIC_HEADERS,
  CLAUDE_CODE_HEADERS,
  startClientsGateway,
  weatherTool,
  type ClientsGateway,
} from './support/clients-gateway.js';

/** Real clients on their defaults, in each one's dialect: tool_use ids, the model list, one refusal in every API. */

let mock: MockUpstream;
let gateway: RunningGateway;
let anthropic: Anthropic;
let openai: OpenAI;
let running: ClientsGateway | undefined;

beforeAll(async () => {
  running = await startClientsGateway();
  ({ mock, gateway, anthropic, openai } = running);
});

afterAll(async () => {
  await running?.close();
});

const messagesUrl = (query = '') => `${gateway.url}/v1/messages${query}`;

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
