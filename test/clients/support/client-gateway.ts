import { startMockUpstream, type MockUpstream } from '../../../apps/mock-upstream/mock-upstream.js';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { startGateway, type RunningGateway } from '../../support/gateway.js';
import { takeRefusedHosts } from './offline-guard.js';

/** The reasoning text the `thinker` models stream before answering. */
export const THOUGHT = 'weigh it first';

/**
 * A reasoning model under the name the OpenAI Agents SDK picks by default, which the OpenAI
 * clients also recognise as a reasoning model (they then send its reasoning settings). It runs on
 * the HTTP engine, whose mock calls an offered tool on its own (tool_choice auto), as a real model
 * would when the client may not force one (Anthropic with thinking on).
 */
export const OPENAI_REASONING_MODEL = 'gpt-5.4-mini';

/** A gateway on loopback with the stub models and HTTP-engine models over one mock upstream. */
export interface ClientGateway {
  gateway: RunningGateway;
  upstream: MockUpstream;
  /** The gateway's OpenAI-style base URL, `/v1` included. */
  baseURL: string;
  close(): Promise<void>;
}

/**
 * Models every client suite uses: `stub` and `thinker` on the stub engine (the stub calls a tool
 * when tool_choice requires one and the last user message is a JSON object); `upstream` and
 * `gpt-5.4-mini` (reasoning) on the HTTP engine over a vLLM-style mock (which calls a tool
 * whenever tools are offered and the last user message is a JSON object).
 */
export async function startClientGateway(): Promise<ClientGateway> {
  const upstream = await startMockUpstream({ servedModel: 'org/served-model' });
  const overUpstream = {
    engine: 'http',
    upstreams: [upstream.url],
    upstreamModel: 'org/served-model',
    healthCheckIntervalMs: 0,
  };
  const gateway = await startGateway({
    models: [
      { name: 'stub', engine: 'stub' },
      { name: 'thinker', engine: 'stub', reasoning: THOUGHT },
      { name: 'upstream', ...overUpstream },
      {
        name: OPENAI_REASONING_MODEL,
        ...overUpstream,
        headers: { 'x-mock-behaviour': JSON.stringify({ reasoning: THOUGHT }) },
      },
    ],
  });
  return {
    gateway,
    upstream,
    baseURL: `${gateway.url}/v1`,
    close: async () => {
      await gateway.close();
      await upstream.close();
    },
  };
}

/** A tool argument the stub and the mock both turn into a call of the offered tool. */
export const LYON = { city: 'Lyon' };

/** What the weather tool answers; the stub's final answer repeats a tool's result. */
export function weatherIn(city: string): string {
  return `Sunny in ${city}`;
}

interface UpstreamMessage {
  role: string;
  content: unknown;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
}

/**
 * The tool call and its result as the upstream saw them in the last request it received: the
 * gateway may rename call ids for its clients, but the upstream must get a result that answers
 * the call it made, under that call's id.
 */
export function lastToolExchange(upstream: MockUpstream) {
  const { messages } = upstream.state.received.at(-1)!.body as { messages: UpstreamMessage[] };
  const call = messages.find((message) => message.role === 'assistant' && message.tool_calls?.length)?.tool_calls?.[0];
  const result = messages.find((message) => message.role === 'tool');
  return { call, result, resultText: JSON.stringify(result?.content) };
}

/**
 * One gateway for a spec file: started before its tests and closed after them; after each test
 * the offline guard must have refused no connection. Returns the running gateway.
 */
export function useClientGateway(): () => ClientGateway {
  let served: ClientGateway | undefined;
  beforeAll(async () => {
    served = await startClientGateway();
  });
  afterAll(async () => {
    await served?.close();
  });
  afterEach(() => {
    expect(takeRefusedHosts()).toEqual([]);
  });
  return () => served!;
}
