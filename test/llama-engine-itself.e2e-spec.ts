import { readFileSync, statSync } from 'node:fs';
import { readGgufFileInfo } from 'node-llama-cpp';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTinyGguf } from '../scripts/tiny-gguf/write-tiny-gguf.js';
import type { LlamaEngine } from '../src/engines/llama/llama-engine.js';
import { renderChatPrompt } from '../src/engines/llama/chat-prompt.js';
import { generationRequest, userMessage } from './support/requests.js';
import { eventually, readJson, startGateway, type RunningGateway } from './support/gateway.js';
import { postSse } from './support/sse-client.js';
import { conversation, useTinyLlamaGateway, SYSTEM, type TinyLlamaGateway } from './support/tiny-llama-gateway.js';

let modelPath: string;
let gateway: RunningGateway;
let client: OpenAI;
let promptTokenCount: TinyLlamaGateway['promptTokenCount'];

useTinyLlamaGateway((running) => ({ modelPath, gateway, client, promptTokenCount } = running));

const engineOf = (name: string) => gateway.registry.resolve(name).engine as LlamaEngine;

describe('the llama engine’s answers at the start of a stream', () => {
  // No keep-alive is due before the engine accepts or refuses, however slow this machine.
  let own: RunningGateway;
  beforeAll(async () => {
    own = await startGateway({
      keepalive: { mode: 'chunks', intervalMs: 60_000 },
      models: [{ name: 'tiny-cached', engine: 'llama', modelPath, threads: 1, sequences: 1, contextSize: 1024 }],
    });
  });
  afterAll(() => own?.close());
  const ownChatUrl = () => `${own.url}/v1/chat/completions`;
  const messagesUrl = () => `${own.url}/v1/messages`;

  it('refuses a prompt longer than the context with 400 and the protocol’s error body, not an opened stream', async () => {
    const text = ' hello world'.repeat(1000);
    const tokens = promptTokenCount(text);
    expect(tokens).toBeGreaterThan(1024);
    const chat = await fetch(ownChatUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny-cached', messages: conversation(text), stream: true }),
    });
    expect(chat.status).toBe(400);
    expect((await readJson(chat)).error).toMatchObject({
      type: 'invalid_request_error',
      code: 'context_length_exceeded',
      param: 'messages',
      message: expect.stringContaining(`${tokens} tokens`),
    });

    const anthropic = new Anthropic({ baseURL: own.url, apiKey: 'unused', maxRetries: 0 });
    const refused = await anthropic.messages
      .create({
        model: 'tiny-cached',
        system: SYSTEM,
        max_tokens: 5,
        messages: [{ role: 'user', content: text }],
        stream: true,
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    expect(refused).toMatchObject({
      status: 400,
      error: {
        error: { type: 'invalid_request_error', message: `prompt is too long: ${tokens} tokens > 1024 maximum` },
      },
    });
    expect(
      await eventually(() => (own.registry.resolve('tiny-cached').engine as LlamaEngine).activeGenerations === 0),
    ).toBe(true);
  });

  it('message_start carries the cached part of a prompt the sequence holds, as message_delta does', async () => {
    const body = {
      model: 'tiny-cached',
      system: SYSTEM,
      max_tokens: 3,
      stream: true,
      messages: [{ role: 'user', content: 'Remember this prefix, then answer' }],
    };
    const usageOf = async () => {
      const exchange = await postSse(messagesUrl(), body);
      const payloads = exchange.json();
      return {
        start: payloads.find((event) => event.type === 'message_start')?.message.usage,
        delta: payloads.find((event) => event.type === 'message_delta')?.usage,
      };
    };
    const prompt = promptTokenCount('Remember this prefix, then answer');
    await usageOf();
    // The one sequence still holds the first request's prompt: all of it but the last token is reused.
    const second = await usageOf();
    expect(second.start).toEqual({ input_tokens: 1, output_tokens: 0, cache_read_input_tokens: prompt - 1 });
    expect(second.delta).toMatchObject({ input_tokens: 1, cache_read_input_tokens: prompt - 1 });
  });
});

describe('the llama engine itself', () => {
  it('runs on a tiny GGUF v3 written here: llama architecture, byte-fallback vocabulary, ChatML template', async () => {
    const info = await readGgufFileInfo(modelPath, { readTensorInfo: true });
    expect(info.version).toBe(3);
    expect(info.metadata.general.architecture).toBe('llama');
    const tokenizer = info.metadata.tokenizer;
    expect(tokenizer.ggml.model).toBe('llama');
    expect(tokenizer.ggml.tokens.slice(0, 4)).toEqual(['<unk>', '<s>', '</s>', '<0x00>']);
    expect(tokenizer.ggml.tokens).toContain('<0xFF>');
    expect(tokenizer.chat_template).toContain('<|im_start|>');
    expect(info.tensorInfo?.map((tensor) => tensor.name)).toContain('blk.1.ffn_down.weight');
    const size = statSync(modelPath).size;
    expect(size).toBeGreaterThan(200_000);
    expect(size).toBeLessThan(4_000_000);
    expect(buildTinyGguf().equals(readFileSync(modelPath))).toBe(true);
  });

  it('renders tools and tool results with the model template', () => {
    const engine = engineOf('tiny');
    const request = generationRequest({
      messages: [
        userMessage('Weather in Paris?'),
        {
          role: 'assistant',
          content: '',
          toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
        },
        { role: 'tool', toolCallId: 'call_1', content: '{"celsius":21}' },
      ],
      tools: [
        {
          name: 'get_weather',
          description: 'Current weather',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
        },
      ],
    });
    const prompt = renderChatPrompt(engine.chatWrapper, engine.model.tokenizer, request);
    const text = engine.model.detokenize(prompt.tokens, true);
    expect(text).toContain('<tools>\n{"type": "function", "function": {"name": "get_weather"');
    expect(text).toContain('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>');
    expect(text).toContain('<tool_response>\n{"celsius":21}\n</tool_response>');
    expect(text.endsWith('</tool_response><|im_end|>\n<|im_start|>assistant\n')).toBe(true);
    expect(prompt.offersTools).toBe(true);
  });

  it('with disableReasoning, starts an answer the client did not ask reasoning of after an empty, closed thought', () => {
    const render = (overrides: Parameters<typeof generationRequest>[0]) => {
      const prompt = renderChatPrompt(
        engineOf('tiny').chatWrapper,
        engineOf('tiny').model.tokenizer,
        generationRequest(overrides),
        true,
      );
      return {
        text: engineOf('tiny').model.detokenize(prompt.tokens, true),
        startsInReasoning: prompt.startsInReasoning,
      };
    };
    expect(render({ reasoningOutput: 'hide' })).toEqual({
      text: expect.stringMatching(/<\|im_start\|>assistant\n<think>\n\n<\/think>\n\n$/),
      startsInReasoning: false,
    });
    expect(render({ reasoning: { enabled: false } }).text).toMatch(/assistant\n<think>\n\n<\/think>\n\n$/);
    // A thought the prompt opened is closed.
    expect(
      render({ reasoningOutput: 'hide', messages: [userMessage('hi'), { role: 'assistant', content: '<think>' }] }),
    ).toEqual({
      text: expect.stringMatching(/assistant\n<think>\n<\/think>\n\n$/),
      startsInReasoning: false,
    });
    // Asked for, or not said: the template's own prompt.
    expect(render({ reasoningOutput: 'show', reasoning: { enabled: true } }).text).toMatch(
      /<\|im_start\|>assistant\n$/,
    );
    expect(render({}).text).toMatch(/<\|im_start\|>assistant\n$/);
  });

  it('with disableReasoning, a request with reasoning off gets an answer where the prompt had opened a thought', async () => {
    const ask = (model: string) =>
      client.chat.completions.create({
        model,
        max_tokens: 6,
        seed: 3,
        reasoning_effort: 'none',
        messages: [
          { role: 'user', content: 'Think about it' },
          { role: 'assistant', content: '<think>' },
        ],
      });
    const [plain, closed] = await Promise.all([ask('tiny'), ask('tiny-no-think')]);
    const reasoningOf = (answer: OpenAI.ChatCompletion) =>
      (answer.choices[0].message as { reasoning_content?: string }).reasoning_content;
    expect(reasoningOf(plain)?.length).toBeGreaterThan(0);
    expect(plain.choices[0].message.content ?? '').toBe('');
    expect(reasoningOf(closed)).toBeUndefined();
    expect(closed.choices[0].message.content?.length).toBeGreaterThan(0);
  });

  it('closes while a generation runs: the stream fails in-band and nothing crashes', async () => {
    const own = await startGateway({
      models: [{ name: 'tiny', engine: 'llama', modelPath, threads: 1, sequences: 1 }],
    });
    const engine = own.registry.resolve('tiny').engine as LlamaEngine;
    const events: string[] = [];
    const subscription = engine.generate(generationRequest({ sampling: { stop: [], maxTokens: 3000 } })).subscribe({
      next: (event) => events.push(event.type),
      error: (error) => events.push(`error:${error.kind}`),
    });
    expect(await eventually(() => events.includes('text'), 5000)).toBe(true);
    await own.close();
    expect(events.at(-1)).toBe('error:overloaded');
    expect(engine.activeGenerations).toBe(0);
    expect(engine.isReady()).toBe(false);
    subscription.unsubscribe();
  });
});
