import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getLlama, readGgufFileInfo, type LlamaModel } from 'node-llama-cpp';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTinyGguf, writeTinyGguf } from '../scripts/tiny-gguf/write-tiny-gguf.js';
import type { LlamaEngine } from '../src/engines/llama/llama-engine.js';
import { renderChatPrompt } from '../src/engines/llama/chat-prompt.js';
import { generationRequest, userMessage } from './support/requests.js';
import { eventually, readJson, startGateway, type RunningGateway } from './support/gateway.js';
import { postSse, type WireFrame } from './support/sse-client.js';

const SYSTEM = 'You are a tiny test model.';

let dir: string;
let modelPath: string;
let gateway: RunningGateway;
let client: OpenAI;
/** The same GGUF loaded vocabulary-only, to count tokens independently of the engine. */
let vocab: LlamaModel;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gantry-llama-'));
  modelPath = join(dir, 'tiny.gguf');
  writeTinyGguf(modelPath);
  gateway = await startGateway({
    keepalive: { mode: 'chunks', intervalMs: 50 },
    models: [
      { name: 'tiny', engine: 'llama', modelPath, threads: 1, sequences: 2, contextSize: 1024 },
      { name: 'tiny-single', engine: 'llama', modelPath, threads: 1, sequences: 1, contextSize: 4096 },
      {
        name: 'tiny-prefill',
        engine: 'llama',
        modelPath,
        threads: 1,
        sequences: 1,
        contextSize: 4096,
        batchSize: 32,
        gpu: false,
      },
      {
        name: 'tiny-no-think',
        engine: 'llama',
        modelPath,
        threads: 1,
        sequences: 1,
        contextSize: 256,
        disableReasoning: true,
      },
    ],
  });
  client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const llama = await getLlama({ gpu: false, build: 'never' });
  vocab = await llama.loadModel({ modelPath, vocabOnly: true });
});

afterAll(async () => {
  await gateway?.close();
  await vocab?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const chatUrl = () => `${gateway.url}/v1/chat/completions`;
const engineOf = (name: string) => gateway.registry.resolve(name).engine as LlamaEngine;
const conversation = (text: string) => [
  { role: 'system' as const, content: SYSTEM },
  { role: 'user' as const, content: text },
];
/** The prompt as the model's ChatML template renders it, tokenized by the model's own tokenizer. */
const promptTokenCount = (text: string) =>
  vocab.tokenize(
    `<|im_start|>system\n${SYSTEM}<|im_end|>\n<|im_start|>user\n${text}<|im_end|>\n<|im_start|>assistant\n`,
    true,
  ).length;
const contentFrames = (frames: WireFrame[]) =>
  frames.flatMap((frame) => {
    if (frame.kind !== 'event' || frame.data === '[DONE]') return [];
    const chunk = JSON.parse(frame.data);
    return chunk.choices?.[0]?.delta?.content ? [{ at: frame.at, chunk }] : [];
  });

describe('the llama engine over Chat Completions', () => {
  it('streams tokens with usage and per-token timings that come from the engine', async () => {
    const text = 'Hello world, stream me some tokens';
    const params = {
      model: 'tiny',
      messages: conversation(text),
      stream: true as const,
      max_tokens: 24,
      seed: 7,
      stream_options: { include_usage: true },
      timings_per_token: true,
    };
    const stream = await client.chat.completions.create(params);
    let content = '';
    let usage: OpenAI.CompletionUsage | undefined | null;
    const finishReasons: string[] = [];
    const timings: Array<Record<string, number>> = [];
    for await (const chunk of stream) {
      content += chunk.choices[0]?.delta.content ?? '';
      if (chunk.choices[0]?.finish_reason) finishReasons.push(chunk.choices[0].finish_reason);
      if (chunk.usage) usage = chunk.usage;
      const chunkTimings = (chunk as { timings?: Record<string, number> }).timings;
      if (chunkTimings) timings.push(chunkTimings);
    }

    const expectedPrompt = promptTokenCount(text);
    expect(content.length).toBeGreaterThan(0);
    expect(finishReasons).toEqual(['length']);
    expect(usage).toEqual({ prompt_tokens: expectedPrompt, completion_tokens: 24, total_tokens: expectedPrompt + 24 });
    const last = timings.at(-1)!;
    expect(last).toMatchObject({ prompt_n: expectedPrompt, cache_n: 0, predicted_n: 24 });
    expect(last.prompt_ms).toBeGreaterThan(0);
    expect(last.predicted_per_second).toBeGreaterThan(0);
    const counts = timings.map((timing) => timing.predicted_n);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(counts[0]).toBe(1);
  });

  it('streams through Anthropic Messages and OpenAI Responses too, with the engine usage', async () => {
    const text = 'Hello world, stream me some tokens';
    const expectedPrompt = promptTokenCount(text);
    const anthropic = new Anthropic({ baseURL: gateway.url, apiKey: 'unused', maxRetries: 0 });
    let streamed = '';
    const message = await anthropic.messages
      .stream({ model: 'tiny', system: SYSTEM, max_tokens: 12, messages: [{ role: 'user', content: text }] })
      .on('text', (delta) => (streamed += delta))
      .finalMessage();
    // Random weights: an end-of-turn token is unlikely but possible, so either ending is valid.
    expect(
      message.stop_reason === 'max_tokens' ? message.usage.output_tokens === 12 : message.stop_reason === 'end_turn',
    ).toBe(true);
    expect(message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0)).toBe(expectedPrompt);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    expect(streamed.length).toBeGreaterThan(0);

    let deltas = 0;
    const response = await client.responses
      .stream({ model: 'tiny', instructions: SYSTEM, input: text, max_output_tokens: 12 })
      .on('response.output_text.delta', () => (deltas += 1))
      .finalResponse();
    expect(
      response.status === 'incomplete' ? response.usage?.output_tokens === 12 : response.status === 'completed',
    ).toBe(true);
    expect(response.usage?.input_tokens).toBe(expectedPrompt);
    expect(deltas).toBeGreaterThan(1);
  });

  it('counts prompt tokens exactly for /v1/messages/count_tokens, as the generation then reports them', async () => {
    const body = {
      model: 'tiny',
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Count these words please' }],
    };
    const post = (path: string, extra: Record<string, unknown> = {}) =>
      fetch(`${gateway.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...body, ...extra }),
      }).then(readJson);
    const counted = await post('/v1/messages/count_tokens');
    const answered = await post('/v1/messages', { max_tokens: 1 });
    expect(counted.input_tokens).toBeGreaterThan(5);
    expect(counted.input_tokens).toBe(answered.usage.input_tokens + (answered.usage.cache_read_input_tokens ?? 0));
  });

  it('honours stop strings split across tokens and reports finish reason stop', async () => {
    const messages = conversation('Say something greedy');
    const free = await client.chat.completions.create({ model: 'tiny', messages, max_tokens: 40, temperature: 0 });
    const answer = free.choices[0].message.content ?? '';
    expect(answer.length).toBeGreaterThan(10);
    const stop = answer.slice(6, 10);
    const stopped = await client.chat.completions.create({
      model: 'tiny',
      messages,
      max_tokens: 40,
      temperature: 0,
      stop: [stop],
    });
    expect(stopped.choices[0]).toMatchObject({
      finish_reason: 'stop',
      message: { content: answer.slice(0, answer.indexOf(stop)) },
    });
  });

  it('decodes two requests at once on two sequences: their tokens interleave', async () => {
    expect(gateway.registry.resolve('tiny').admission.limits.maxConcurrency).toBe(2);
    const request = (seed: number) => {
      const sentAt = performance.now();
      const body = { model: 'tiny', messages: conversation(`parallel ${seed}`), stream: true, max_tokens: 200, seed };
      return postSse(chatUrl(), body).then((exchange) => contentFrames(exchange.frames).map(({ at }) => sentAt + at));
    };
    const [first, second] = await Promise.all([request(1), request(2)]);
    expect(first.length).toBeGreaterThan(20);
    expect(second.length).toBeGreaterThan(20);
    // Run one after the other, one stream's tokens would all come before the other's first.
    expect(second[0]).toBeLessThan(first.at(-1)!);
    expect(first[0]).toBeLessThan(second.at(-1)!);
  });

  it('keeps requests in the admission queue, with heartbeats, while every sequence is busy', async () => {
    const admission = gateway.registry.resolve('tiny-single').admission;
    expect(admission.limits.maxConcurrency).toBe(1);
    let releaseFirst = false;
    let queuedAtHeartbeat = -1;
    const first = postSse(
      chatUrl(),
      {
        model: 'tiny-single',
        messages: conversation('I hold the only sequence'),
        stream: true,
        max_tokens: 3000,
        seed: 5,
      },
      { onFrame: () => releaseFirst },
    );
    expect(await eventually(() => admission.running === 1)).toBe(true);
    const second = await postSse(
      chatUrl(),
      { model: 'tiny-single', messages: conversation('I wait my turn'), stream: true, max_tokens: 4, seed: 6 },
      {
        onFrame: (frame) => {
          if (frame.kind === 'event' && frame.data.includes('"delta":{}') && queuedAtHeartbeat === -1) {
            queuedAtHeartbeat = admission.queued;
            releaseFirst = true;
          }
        },
      },
    );
    await first;
    expect(queuedAtHeartbeat).toBe(1);
    const chunks = second.json();
    const firstOutput = chunks.findIndex((chunk) => chunk.choices?.[0]?.delta?.content);
    expect(firstOutput).toBeGreaterThan(1);
    expect(chunks.slice(1, firstOutput).every((chunk) => Object.keys(chunk.choices[0].delta).length === 0)).toBe(true);
    expect(chunks.find((chunk) => chunk.choices?.[0]?.finish_reason)?.choices[0].finish_reason).toBe('length');
    expect(await eventually(() => engineOf('tiny-single').activeGenerations === 0)).toBe(true);
  });

  it('enforces response_format json_schema with a grammar', async () => {
    const completion = await client.chat.completions.create({
      model: 'tiny',
      messages: conversation('Give me JSON'),
      max_tokens: 40,
      seed: 11,
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'place',
          schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
    });
    expect(completion.choices[0].message.content).toMatch(/^\{\s*"city"\s*:\s*"/);
  });

  it('stops decoding when the client hangs up, and lends the sequence to the next request', async () => {
    const engine = engineOf('tiny-single');
    const before = engine.stats;
    const messages = conversation('Talk for a long time');
    const exchange = await postSse(
      chatUrl(),
      { model: 'tiny-single', messages, stream: true, max_tokens: 3000, seed: 3 },
      { onFrame: (_frame, frames) => contentFrames(frames).length >= 5 },
    );
    expect(exchange.json().some((chunk) => chunk.choices?.[0]?.finish_reason)).toBe(false);
    expect(await eventually(() => engine.activeGenerations === 0 && engine.idleSequences === 1, 5000)).toBe(true);

    const after = engine.stats;
    expect(after.cancelledInDecode - before.cancelledInDecode).toBe(1);
    expect(after.decodedAfterCancel - before.decodedAfterCancel).toBeLessThanOrEqual(1);
    expect(after.decodedTokens - before.decodedTokens).toBeLessThan(3000);

    const next = await postSse(chatUrl(), {
      model: 'tiny-single',
      messages,
      stream: true,
      max_tokens: 8,
      timings_per_token: true,
      stream_options: { include_usage: true },
    });
    const chunks = next.json();
    expect(chunks.find((chunk) => chunk.choices?.[0]?.finish_reason)?.choices[0].finish_reason).toBe('length');
    // The one sequence still holds the cancelled request's prompt: the follow-up reuses it.
    const timings = chunks.findLast((chunk) => chunk.timings)!.timings;
    expect(timings.cache_n).toBe(promptTokenCount('Talk for a long time') - 1);
    expect(timings.prompt_n).toBe(1);
    expect(engine.stats.decodedTokens - after.decodedTokens).toBe(8);
  });

  it('stops a long prefill within one batch when the client hangs up', async () => {
    const engine = engineOf('tiny-prefill');
    const before = engine.stats;
    const text = ' hello world'.repeat(1700);
    expect(promptTokenCount(text)).toBeGreaterThan(3000);
    // Hang up at the opening frame: it leaves once the prompt is tokenized, long before ~100 batches are evaluated.
    await postSse(
      chatUrl(),
      { model: 'tiny-prefill', messages: conversation(text), stream: true, max_tokens: 5 },
      { onFrame: () => true },
    );
    expect(await eventually(() => engine.activeGenerations === 0, 10_000)).toBe(true);
    const after = engine.stats;
    expect(after.cancelledInPrefill - before.cancelledInPrefill).toBe(1);
    expect(after.decodedTokens).toBe(before.decodedTokens);
  });
});

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
