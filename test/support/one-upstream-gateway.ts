import OpenAI from 'openai';
import { afterAll, beforeAll } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../../apps/mock-upstream/mock-upstream.js';
import type { MockBehaviour } from '../../apps/mock-upstream/mock-behaviour.js';
import { startGateway, type RunningGateway } from './gateway.js';
import type { SseExchange } from './sse-client.js';

export const ask = (text: string) => [{ role: 'user' as const, content: text }];
export const NO_THINKING = { chat_template_kwargs: { enable_thinking: false } };
/** Headers that make the mock upstream behave so (see MockBehaviour). */
export const behaving = (behaviour: Partial<MockBehaviour>) => ({ 'x-mock-behaviour': JSON.stringify(behaviour) });
export const isHeartbeat = (chunk: Record<string, any>) =>
  chunk.choices?.length === 1 &&
  Object.keys(chunk.choices[0].delta).length === 0 &&
  chunk.choices[0].finish_reason === null;
export const contentOf = (exchange: SseExchange) =>
  exchange
    .json()
    .map((chunk) => chunk.choices?.[0]?.delta?.content ?? '')
    .join('');
export const errorOf = (exchange: SseExchange) => exchange.json().find((chunk) => chunk.error)?.error;

/** Ports where nothing listens: a mock that was started and closed. */
export async function refusingUrl(): Promise<string> {
  const mock = await startMockUpstream();
  await mock.close();
  return mock.url;
}

/** A gateway whose HTTP models each have one upstream: `main` answers well, `faults` as each model's headers say. */
export interface OneUpstreamGateway {
  main: MockUpstream;
  faults: MockUpstream;
  gateway: RunningGateway;
  client: OpenAI;
  close(): Promise<void>;
}

export async function startOneUpstreamGateway(): Promise<OneUpstreamGateway> {
  const [main, faults] = await Promise.all([
    startMockUpstream({ servedModel: 'org/served-model' }),
    startMockUpstream(),
  ]);
  const closeMocks = () => Promise.all([main.close(), faults.close()]).then(() => undefined);
  try {
    const [refused, ...down] = await Promise.all([refusingUrl(), refusingUrl(), refusingUrl(), refusingUrl()]);
    const upstream = { engine: 'http', upstreams: [main.url], upstreamModel: 'org/served-model' };
    const faulty = (name: string, behaviour: Partial<MockBehaviour>, extra: Record<string, unknown> = {}) => ({
      name,
      engine: 'http',
      upstreams: [faults.url],
      headers: behaving(behaviour),
      healthCheckIntervalMs: 0,
      maxFailures: 100,
      ...extra,
    });
    const gateway = await startGateway({
      keepalive: { mode: 'chunks', intervalMs: 100 },
      models: [
        { name: 'fast', ...upstream, apiKey: 'sk-upstream', headers: { 'x-team': 'gantry' } },
        { name: 'fast-streamed', ...upstream, nonStreaming: 'stream' },
        { name: 'thinker', ...upstream, headers: behaving({ reasoning: 'first think', reasoningField: 'reasoning' }) },
        {
          name: 'thinker-llama',
          ...upstream,
          headers: behaving({ reasoning: 'first think', reasoningField: 'reasoning_content' }),
        },
        {
          name: 'thinker-hinted',
          ...upstream,
          headers: behaving({ reasoning: 'first think' }),
          disableReasoningWith: NO_THINKING,
        },
        { name: 'timed', ...upstream, headers: behaving({ prefillMs: 300, tokenIntervalMs: 50 }) },
        { name: 'silent-prefill', ...upstream, headers: behaving({ prefillMs: 2000 }) },
        { name: 'refused', engine: 'http', upstreams: [refused], healthCheckIntervalMs: 0 },
        { name: 'all-down', engine: 'http', upstreams: down, healthCheckIntervalMs: 100 },
        faulty('error-500', { failure: 'status', failureStatus: 500 }),
        // Faults after output began, as a client sees them when the answer is not continued elsewhere.
        faulty('malformed', { failure: 'malformed', failAfterTokens: 2 }, { midStreamFailover: { enabled: false } }),
        faulty('dropped', { failure: 'drop', failAfterTokens: 2 }, { midStreamFailover: { enabled: false } }),
        faulty(
          'stalled',
          { failure: 'stall', failAfterTokens: 2 },
          { bodyTimeoutMs: 500, midStreamFailover: { enabled: false } },
        ),
        faulty('in-band-error', { failure: 'error', failureStatus: 400, failAfterTokens: 1 }),
        faulty('long-prefill', { prefillMs: 10_000 }),
        faulty('drip', { tokenIntervalMs: 200 }),
        faulty('slow-whole', { prefillMs: 1500 }, { headersTimeoutMs: 200, maxFailures: 1 }),
      ],
    });
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    return {
      main,
      faults,
      gateway,
      client,
      close: async () => {
        await gateway.close();
        await closeMocks();
      },
    };
  } catch (error) {
    await closeMocks();
    throw error;
  }
}

/** Starts the gateway before the enclosing suite's tests, hands it to `take`, and closes it after them. */
export function useOneUpstreamGateway(take: (running: OneUpstreamGateway) => void): void {
  let running: OneUpstreamGateway | undefined;
  beforeAll(async () => {
    running = await startOneUpstreamGateway();
    take(running);
  });
  afterAll(async () => {
    await running?.close();
  });
}
