import Anthropic from '@anthropic-ai/sdk';
import { createOpenAI } from '@ai-sdk/openai';
import { streamText } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MockBehaviour } from '../apps/mock-upstream/mock-behaviour.js';
import { startMockUpstream, type MockUpstream } from '../apps/mock-upstream/mock-upstream.js';
import { startGateway, type RunningGateway } from './support/gateway.js';

// The AI SDK's warnings concern the requests it builds, not Gantry's answers.
(globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS = false;

const PROMPT = 'one two three four five six seven eight';
const KEEPALIVE_MS = 100;
/** Every response's prefill, the continuation's too: ten keep-alive intervals of silence to fill. */
const PREFILL_MS = 1000;

/** One SSE event as it reached the client, in order. */
interface Heard {
  event?: string;
  data: string;
}

/**
 * A fetch that hands the SDK the gateway's response untouched and notes every SSE event of its
 * body as it passes: what the client heard, whatever the SDK makes of it.
 */
function listeningFetch(heard: Heard[]): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!response.body) return response;
    const decoder = new TextDecoder();
    let pending = '';
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          pending += decoder.decode(chunk, { stream: true });
          const blocks = pending.split('\n\n');
          pending = blocks.pop() ?? '';
          for (const block of blocks) {
            const lines = block.split('\n');
            const event = lines.find((line) => line.startsWith('event: '))?.slice(7);
            const data = lines
              .filter((line) => line.startsWith('data: '))
              .map((line) => line.slice(6))
              .join('\n');
            heard.push({ event, data });
          }
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

type Kind = 'output' | 'keepalive' | 'other';

/** What each API's events are, to the test. */
const KINDS: Record<'chat' | 'messages' | 'responses', (heard: Heard) => Kind> = {
  chat: ({ data }) => {
    if (data === '[DONE]' || data.length === 0) return 'other';
    const choice = (
      JSON.parse(data) as { choices?: Array<{ delta?: Record<string, unknown>; finish_reason?: unknown }> }
    ).choices?.[0];
    if (!choice || choice.finish_reason) return 'other';
    if (typeof choice.delta?.content === 'string' && choice.delta.content.length > 0) return 'output';
    return Object.keys(choice.delta ?? {}).length === 0 ? 'keepalive' : 'other';
  },
  messages: ({ event }) => (event === 'ping' ? 'keepalive' : event === 'content_block_delta' ? 'output' : 'other'),
  responses: ({ data }) => {
    const type = (JSON.parse(data) as { type: string }).type;
    return type === 'keepalive' ? 'keepalive' : type === 'response.output_text.delta' ? 'output' : 'other';
  },
};

/** Keep-alives heard between each two output events (and before the first), in order. */
function keepalivesBetweenOutputs(heard: Heard[], kindOf: (heard: Heard) => Kind): number[] {
  const gaps = [0];
  for (const event of heard) {
    const kind = kindOf(event);
    if (kind === 'output') gaps.push(0);
    else if (kind === 'keepalive') gaps[gaps.length - 1] += 1;
  }
  return gaps;
}

describe('keep-alives through a resume: a continuation waiting for its first token is not silence', () => {
  let replicas: MockUpstream[];
  let gateway: RunningGateway;

  beforeAll(async () => {
    replicas = await Promise.all([0, 1].map(() => startMockUpstream()));
    const behaviour: Partial<MockBehaviour> = { failure: 'drop', failAtTokens: [3], prefillMs: PREFILL_MS };
    gateway = await startGateway({
      keepalive: { mode: 'chunks', intervalMs: KEEPALIVE_MS },
      models: [
        {
          name: 'breaks',
          engine: 'http',
          upstreams: replicas.map((replica) => replica.url),
          healthCheckIntervalMs: 0,
          maxFailures: 1000,
          headers: { 'x-mock-behaviour': JSON.stringify(behaviour) },
        },
      ],
    });
  });

  afterAll(async () => {
    await gateway?.close();
    await Promise.all((replicas ?? []).map((replica) => replica.close()));
  });

  /**
   * The whole answer reached the SDK, and the client heard keep-alives during the first prefill
   * and again during the continuation's (between the third token and the fourth), none elsewhere.
   */
  const expectHeardThroughTheResume = (heard: Heard[], kindOf: (heard: Heard) => Kind) => {
    const gaps = keepalivesBetweenOutputs(heard, kindOf);
    expect(gaps).toHaveLength(9);
    expect(gaps[0]).toBeGreaterThanOrEqual(2);
    expect(gaps[3], `keep-alives between each two tokens: ${gaps.join(' ')}`).toBeGreaterThanOrEqual(2);
    expect([...gaps.slice(1, 3), ...gaps.slice(4)]).toEqual([0, 0, 0, 0, 0, 0, 0]);
  };

  it('Chat Completions: empty-delta chunks, through the openai SDK’s stream helper', async () => {
    const heard: Heard[] = [];
    const client = new OpenAI({
      baseURL: `${gateway.url}/v1`,
      apiKey: 'unused',
      maxRetries: 0,
      fetch: listeningFetch(heard),
    });
    const stream = client.chat.completions.stream({ model: 'breaks', messages: [{ role: 'user', content: PROMPT }] });
    const completion = await stream.finalChatCompletion();
    expect(completion.choices[0].message.content).toBe(PROMPT);
    expectHeardThroughTheResume(heard, KINDS.chat);
  });

  it('Messages: pings, through the Anthropic SDK’s stream helper', async () => {
    const heard: Heard[] = [];
    const client = new Anthropic({
      baseURL: gateway.url,
      apiKey: 'unused',
      maxRetries: 0,
      fetch: listeningFetch(heard),
    });
    const message = await client.messages
      .stream({ model: 'breaks', max_tokens: 100, messages: [{ role: 'user', content: PROMPT }] })
      .finalMessage();
    expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: PROMPT })]);
    expectHeardThroughTheResume(heard, KINDS.messages);
  });

  it('Responses: `keepalive` events once output began, through the openai SDK’s stream helper (its accumulator refuses unknown events)', async () => {
    const heard: Heard[] = [];
    const client = new OpenAI({
      baseURL: `${gateway.url}/v1`,
      apiKey: 'unused',
      maxRetries: 0,
      fetch: listeningFetch(heard),
    });
    const response = await client.responses.stream({ model: 'breaks', input: PROMPT }).finalResponse();
    expect(response.output_text).toBe(PROMPT);
    expectHeardThroughTheResume(heard, (event) =>
      // Before the first output the beats are full `response.in_progress` events.
      (JSON.parse(event.data) as { type: string }).type === 'response.in_progress'
        ? 'keepalive'
        : KINDS.responses(event),
    );
    expect(heard.filter((event) => KINDS.responses(event) === 'keepalive').length).toBeGreaterThanOrEqual(2);
  });

  it('Responses: the same through the AI SDK (@ai-sdk/openai responses)', async () => {
    const heard: Heard[] = [];
    const provider = createOpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', fetch: listeningFetch(heard) });
    const result = streamText({ model: provider.responses('breaks'), prompt: PROMPT, maxRetries: 0 });
    expect(await result.text).toBe(PROMPT);
    expect((await result.finishReason) as string).toBe('stop');
    expect(heard.filter((event) => KINDS.responses(event) === 'keepalive').length).toBeGreaterThanOrEqual(2);
  });
});
