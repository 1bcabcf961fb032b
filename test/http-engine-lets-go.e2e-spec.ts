import { plainToInstance } from 'class-transformer';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../apps/mock-upstream/mock-upstream.js';
import { HttpEngine } from '../src/engines/http/http-engine.js';
import { HttpModelConfig } from '../src/engines/http/http-model-config.js';
import { eventually } from './support/gateway.js';
import { behaving } from './support/one-upstream-gateway.js';
import { generationRequest } from './support/requests.js';

// A full collection on demand: V8's own `gc`, exposed for this test (docs/benchmarks.md, "The floors, with profiles").
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

describe('the HTTP engine keeps no request objects while an answer streams', () => {
  let upstream: MockUpstream;
  let engine: HttpEngine;

  beforeAll(async () => {
    upstream = await startMockUpstream();
    const config = {
      name: 'slow',
      engine: 'http',
      upstreams: [upstream.url],
      healthCheckIntervalMs: 0,
      // Long enough that the answer is still on its way when the heap is looked at.
      headers: behaving({ prefillMs: 60_000 }),
    };
    engine = new HttpEngine(plainToInstance(HttpModelConfig, config, { exposeDefaultValues: true }));
  });

  afterAll(async () => {
    await engine.close();
    await upstream.close();
  });

  it('lets go of the messages once the upstream body is sent, and runs a generation once', async () => {
    const { generation, messages } = (() => {
      const request = generationRequest({ model: 'slow', stream: true });
      return { generation: engine.generate(request), messages: new WeakRef(request.messages) };
    })();
    const subscription = generation.subscribe({ error: () => undefined });
    expect(await eventually(() => upstream.state.openRequests === 1)).toBe(true);
    collect();
    expect(messages.deref()).toBeUndefined();
    expect(upstream.state.openRequests).toBe(1);

    const again = await new Promise<unknown>((resolve) => generation.subscribe({ error: resolve }));
    expect(again).toMatchObject({ message: 'This generation was already sent upstream.' });
    subscription.unsubscribe();
    expect(await eventually(() => upstream.state.openRequests === 0)).toBe(true);
  });
});
