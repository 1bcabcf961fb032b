import OpenAI from 'openai';
import { afterAll, beforeAll } from 'vitest';
import { startGateway, type RunningGateway } from './gateway.js';

export { ask, isHeartbeat } from './one-upstream-gateway.js';

/** Stub models the Chat Completions specs ask, each paced or failing as its test needs. */
export const STUB_CHAT_MODELS = [
  { name: 'stub', engine: 'stub' },
  { name: 'slow', engine: 'stub', prefillMs: 1000, tokenIntervalMs: 300 },
  { name: 'thinker', engine: 'stub', reasoning: 'first think then answer' },
  { name: 'flaky', engine: 'stub', prefillMs: 300, failAfterTokens: 1, failWith: 'upstream' },
  { name: 'single', engine: 'stub', prefillMs: 10_000, maxConcurrency: 1, maxQueue: 1 },
  { name: 'drip', engine: 'stub', tokenIntervalMs: 200 },
  { name: 'long', engine: 'stub', prefillMs: 10_000 },
  { name: 'one-slot', engine: 'stub', prefillMs: 10_000, maxConcurrency: 1, maxQueue: 3 },
];

export interface StubChatGateway {
  gateway: RunningGateway;
  client: OpenAI;
}

/** A gateway serving STUB_CHAT_MODELS with chunk keep-alives and a 64 KiB body limit. */
export async function startStubChatGateway(): Promise<StubChatGateway> {
  const gateway = await startGateway({
    keepalive: { mode: 'chunks', intervalMs: 100 },
    server: { bodyLimitBytes: 64 * 1024 },
    models: STUB_CHAT_MODELS,
  });
  const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  return { gateway, client };
}

/** Starts the gateway before the enclosing suite's tests, hands it to `take`, and closes it after them. */
export function useStubChatGateway(take: (running: StubChatGateway) => void): void {
  let running: StubChatGateway | undefined;
  beforeAll(async () => {
    running = await startStubChatGateway();
    take(running);
  });
  afterAll(async () => {
    await running?.gateway.close();
  });
}
