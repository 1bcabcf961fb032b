import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MockUpstream } from '../apps/mock-upstream/mock-upstream.js';
import { estimatePromptTokens } from '../src/engine/token-estimate.js';
import { readJson, type RunningGateway } from './support/gateway.js';
import { postSse, type SseExchange } from './support/sse-client.js';
import {
  ANTHROPIC_HEADERS,
  CLAUDE_CODE_HEADERS,
  claudeCodeBody,
  startClientsGateway,
  type ClientsGateway,
} from './support/clients-gateway.js';

/** Real clients on their defaults: Claude Code, LangChain's ChatAnthropic, the SDKs' model calls. */

let mock: MockUpstream;
let noTokenizer: MockUpstream;
let gateway: RunningGateway;
let anthropic: Anthropic;
let running: ClientsGateway | undefined;

beforeAll(async () => {
  running = await startClientsGateway();
  ({ mock, noTokenizer, gateway, anthropic } = running);
});

afterAll(async () => {
  await running?.close();
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
