import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import type { LlamaEngine } from '../src/engines/llama/llama-engine.js';
import { eventually, readJson, type RunningGateway } from './support/gateway.js';
import { postSse, type WireFrame } from './support/sse-client.js';
import { conversation, useTinyLlamaGateway, SYSTEM, type TinyLlamaGateway } from './support/tiny-llama-gateway.js';

let gateway: RunningGateway;
let client: OpenAI;
let promptTokenCount: TinyLlamaGateway['promptTokenCount'];

useTinyLlamaGateway((running) => ({ gateway, client, promptTokenCount } = running));

const chatUrl = () => `${gateway.url}/v1/chat/completions`;
const engineOf = (name: string) => gateway.registry.resolve(name).engine as LlamaEngine;
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
