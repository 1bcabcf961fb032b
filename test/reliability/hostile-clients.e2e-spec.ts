import { Writable } from 'node:stream';
import Anthropic from '@anthropic-ai/sdk';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJson, startGateway, type RunningGateway } from '../support/gateway.js';
import { postStream, unpooledAgent } from '../support/http-stream.js';
import { CHAT, MESSAGES } from '../support/protocol-streams.js';

const REDIS_URL = process.env.GANTRY_TEST_REDIS_URL;

// First in the file: the pino root logger is process-wide, made by the first gateway.
describe('API keys', () => {
  const literalKey = 'sk-gantry-literal-6f1c2e';
  const envKey = 'sk-gantry-from-env-93ab41';
  const fileKey = 'sk-gantry-from-file-0d7e55';
  const wrongKey = 'sk-gantry-wrong-77aa10';
  let gateway: RunningGateway;
  let logged = '';
  const restores: Array<() => void> = [];

  beforeAll(async () => {
    // Everything the process prints while the keyed gateway runs, captured instead of printed,
    // and every log line at every level (pino's destination, which writes to the fd directly).
    for (const stream of [process.stdout, process.stderr]) {
      const original = stream.write.bind(stream);
      stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
        logged += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
        const callback = rest.find((argument) => typeof argument === 'function') as (() => void) | undefined;
        callback?.();
        return true;
      }) as typeof stream.write;
      restores.push(() => (stream.write = original));
    }
    const logDestination = new Writable({
      write(chunk, _encoding, done) {
        logged += String(chunk);
        done();
      },
    });
    const keyFile = join(mkdtempSync(join(tmpdir(), 'gantry-keys-')), 'keys.txt');
    writeFileSync(keyFile, `# keys for the e2e test\n${fileKey}\n`);
    process.env.GANTRY_E2E_KEY = envKey;
    gateway = await startGateway(
      {
        auth: { apiKeys: [literalKey, { env: 'GANTRY_E2E_KEY' }, { file: keyFile }] },
        observability: { logging: { level: 'trace' } },
        models: [{ name: 'stub', engine: 'stub' }],
      },
      { observability: { logDestination } },
    );
  });

  afterAll(async () => {
    await gateway?.close();
    for (const restore of restores) restore();
    delete process.env.GANTRY_E2E_KEY;
  });

  const ENDPOINTS = [
    {
      path: '/v1/chat/completions',
      body: { model: 'stub', messages: [{ role: 'user', content: 'hi' }] },
      dialect: 'openai',
    },
    { path: '/v1/responses', body: { model: 'stub', input: 'hi' }, dialect: 'openai' },
    {
      path: '/v1/messages',
      body: { model: 'stub', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] },
      dialect: 'anthropic',
    },
    {
      path: '/v1/messages/count_tokens',
      body: { model: 'stub', messages: [{ role: 'user', content: 'hi' }] },
      dialect: 'anthropic',
    },
  ] as const;

  it('refuses a missing or wrong key with 401 in each protocol shape, and accepts each right key either way', async () => {
    for (const endpoint of ENDPOINTS) {
      const post = (headers: Record<string, string>) =>
        fetch(gateway.url + endpoint.path, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify(endpoint.body),
        });
      for (const headers of [
        {},
        { authorization: `Bearer ${wrongKey}` },
        { 'x-api-key': wrongKey },
        { authorization: `Basic ${literalKey}` },
      ] as Array<Record<string, string>>) {
        const response = await post(headers);
        expect(response.status, `${endpoint.path} ${JSON.stringify(headers)}`).toBe(401);
        const body = await readJson(response);
        if (endpoint.dialect === 'anthropic')
          expect(body).toEqual({ type: 'error', error: { type: 'authentication_error', message: expect.any(String) } });
        else
          expect(body.error).toEqual({
            type: 'authentication_error',
            message: expect.any(String),
            param: null,
            code: expect.stringMatching(/_api_key$/),
          });
      }
      for (const key of [literalKey, envKey, fileKey]) {
        expect((await post({ authorization: `Bearer ${key}` })).status).toBe(200);
        expect((await post({ 'x-api-key': key })).status).toBe(200);
      }
    }
    expect((await fetch(`${gateway.url}/v1/models`)).status).toBe(401);
    expect((await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${envKey}` } })).status).toBe(
      200,
    );
    expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
  });

  it('works with the official SDKs: the right key streams, a wrong one is an AuthenticationError', async () => {
    const openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: literalKey, maxRetries: 0 });
    const stream = await openai.chat.completions.create({
      model: 'stub',
      stream: true,
      messages: [{ role: 'user', content: 'keyed stream' }],
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('keyed stream');
    const refused = await new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: wrongKey, maxRetries: 0 }).responses
      .create({ model: 'stub', input: 'x' })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.AuthenticationError);

    const anthropic = new Anthropic({ baseURL: gateway.url, apiKey: fileKey, maxRetries: 0 });
    const message = await anthropic.messages.create({
      model: 'stub',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'keyed message' }],
    });
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'keyed message' });
    const anthropicRefused = await new Anthropic({ baseURL: gateway.url, apiKey: wrongKey, maxRetries: 0 }).messages
      .create({ model: 'stub', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] })
      .catch((error: unknown) => error);
    expect(anthropicRefused).toBeInstanceOf(Anthropic.AuthenticationError);
  });

  it('never prints a key, accepted or refused', () => {
    // The capture is live: the request lines of the keyed requests above are in it.
    expect(logged).toContain('"msg":"request completed"');
    for (const key of [literalKey, envKey, fileKey, wrongKey]) expect(logged).not.toContain(key);
  });
});

describe.skipIf(REDIS_URL === undefined)('per-key limits shared by two replicas through Redis', () => {
  const key = 'sk-gantry-limited-52c9';
  let replicas: RunningGateway[] = [];

  beforeAll(async () => {
    // Both replicas count under one fresh prefix, so reruns never see old windows.
    const config = {
      keepalive: { intervalMs: 50 },
      redis: { url: REDIS_URL, keyPrefix: `gantry-e2e:${Date.now()}:` },
      auth: { apiKeys: [key], limits: { requestsPerMinute: 6, concurrentStreams: 1, store: 'redis' } },
      models: [{ name: 'slow', engine: 'stub', tokenIntervalMs: 50 }],
    };
    replicas = await Promise.all([startGateway(config), startGateway(config)]);
  });
  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.close()));
  });

  it('refuses a second concurrent stream on the other replica with 429 until the first hangs up, then limits the rate', async () => {
    const [first, second] = replicas;
    const agent = unpooledAgent();
    const headers = { authorization: `Bearer ${key}` };
    const hangUp = { now: false };
    const holder = postStream(first.url, CHAT.path, CHAT.body('slow', 'a b c d e f g h i j k l m n o p'), {
      agent,
      headers,
      onFrame: () => hangUp.now,
    });
    await new Promise((resolve) => setTimeout(resolve, 100));

    const refusedChat = await postStream(second.url, CHAT.path, CHAT.body('slow', 'x'), { agent, headers });
    expect(refusedChat.status).toBe(429);
    expect(refusedChat.headers['retry-after']).toBe('1');
    expect(JSON.parse(refusedChat.body).error).toMatchObject({
      type: 'rate_limit_error',
      code: 'concurrency_limit_exceeded',
    });
    const refusedMessages = await postStream(second.url, MESSAGES.path, MESSAGES.body('slow', 'x'), {
      agent,
      headers: { 'x-api-key': key },
    });
    expect(refusedMessages.status).toBe(429);
    expect(JSON.parse(refusedMessages.body)).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });

    hangUp.now = true;
    expect((await holder).end).toBe('client');
    let accepted = await postStream(second.url, CHAT.path, CHAT.body('slow', 'after the hang-up'), { agent, headers });
    for (let tries = 0; accepted.status === 429 && tries < 20; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      accepted = await postStream(second.url, CHAT.path, CHAT.body('slow', 'after the hang-up'), { agent, headers });
    }
    expect(CHAT.endedWell(accepted.frames)).toBe(true);

    // The requests so far used up to 6 of the minute's 6 across both replicas; more get 429 with a Retry-After.
    let limited;
    for (let attempt = 0; attempt < 8 && limited === undefined; attempt += 1) {
      const outcome = await postStream(first.url, CHAT.path, CHAT.body('slow', 'x'), { agent, headers });
      if (outcome.status === 429 && JSON.parse(outcome.body).error.code === 'rate_limit_exceeded') limited = outcome;
    }
    expect(limited).toBeDefined();
    expect(Number(limited!.headers['retry-after'])).toBeGreaterThan(1);
    // A minute's count comes back between 60 and 61 s after it (one slice late: src/auth/sliding-window.ts).
    expect(Number(limited!.headers['retry-after'])).toBeLessThanOrEqual(61);
    agent.destroy();
  });
});
