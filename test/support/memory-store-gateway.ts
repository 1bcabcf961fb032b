import OpenAI from 'openai';
import { startMockUpstream, type MockUpstream } from '../../apps/mock-upstream/mock-upstream.js';
import { startGateway, type RunningGateway } from './gateway.js';

/** The gateway the memory-store Responses specs share: stub models of each pace and one HTTP model. */
export interface MemoryStoreGateway {
  upstream: MockUpstream;
  gateway: RunningGateway;
  client: OpenAI;
  close(): Promise<void>;
}

export async function startMemoryStoreGateway(): Promise<MemoryStoreGateway> {
  const upstream = await startMockUpstream();
  const gateway = await startGateway({
    keepalive: { mode: 'chunks', intervalMs: 50 },
    responses: { maxResolvedInputBytes: 1024 * 1024 },
    models: [
      { name: 'stub', engine: 'stub' },
      { name: 'thinker', engine: 'stub', reasoning: 'think first' },
      { name: 'slow', engine: 'stub', tokenIntervalMs: 20 },
      { name: 'stuck', engine: 'stub', prefillMs: 600_000, maxConcurrency: 1 },
      { name: 'upstream', engine: 'http', upstreams: [upstream.url] },
    ],
  }).catch(async (error: unknown) => {
    await upstream.close();
    throw error;
  });
  const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  return {
    upstream,
    gateway,
    client,
    close: async () => {
      await gateway.close();
      await upstream.close();
    },
  };
}
