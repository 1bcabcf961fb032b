import { Writable } from 'node:stream';
import Anthropic from '@anthropic-ai/sdk';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { getMetadataStorage } from 'class-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as MessagesDtos from '../../src/protocols/anthropic-messages/messages-request.dto.js';
import * as FunctionDtos from '../../src/protocols/function-definition.dto.js';
import * as ChatDtos from '../../src/protocols/openai-chat/chat-request.dto.js';
import * as ResponsesDtos from '../../src/protocols/openai-responses/responses-request.dto.js';
import type { StubEngine } from '../../src/engines/stub/stub-engine.js';
import { eventually, readJson, startGateway, type RunningGateway } from '../support/gateway.js';
import { hostileCases, type HostileCase } from '../support/hostile-bodies.js';
import {
  hostileShapeCases,
  namesField,
  SHAPE_ENDPOINTS,
  walkedFieldNames,
  type ShapeCase,
} from '../support/hostile-shapes.js';
import { postStream, seededRandom, unpooledAgent } from '../support/http-stream.js';
import { CHAT, MESSAGES, PROTOCOLS } from '../support/protocol-streams.js';
import { hasProtocolErrorShape } from '../support/protocol-errors.js';

const REDIS_URL = process.env.GANTRY_TEST_REDIS_URL;

async function send(base: string, hostile: HostileCase): Promise<string | undefined> {
  let response: Response;
  try {
    response = await fetch(base + hostile.path, {
      method: 'POST',
      headers: hostile.contentType === undefined ? {} : { 'content-type': hostile.contentType },
      body: hostile.body,
      signal: AbortSignal.timeout(5_000),
    });
  } catch (error) {
    return `${hostile.label}: no answer (${(error as Error).name})`;
  }
  const text = await response.text();
  if (response.status < 400 || response.status >= 500)
    return `${hostile.label}: status ${response.status} ${text.slice(0, 200)}`;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `${hostile.label}: ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`;
  }
  return hasProtocolErrorShape(hostile.path, body)
    ? undefined
    : `${hostile.label}: ${response.status} in the wrong shape ${text.slice(0, 200)}`;
}

/** A problem with the answer to a hostile shape, or undefined: never a 5xx; a refusal in the protocol's shape, naming the field. */
async function sendShape(base: string, hostile: ShapeCase): Promise<string | undefined> {
  let response: Response;
  try {
    response = await fetch(base + hostile.path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: hostile.body,
      signal: AbortSignal.timeout(5_000),
    });
  } catch (error) {
    return `${hostile.label}: no answer (${(error as Error).name})`;
  }
  const text = await response.text();
  if (response.status >= 500 || (hostile.mustRefuse && response.status < 400))
    return `${hostile.label}: status ${response.status} ${text.slice(0, 200)}`;
  if (response.status < 400) return undefined;
  const body = JSON.parse(text) as { error: { param?: string | null; message: string } };
  if (!hasProtocolErrorShape(hostile.path, body))
    return `${hostile.label}: ${response.status} in the wrong shape ${text.slice(0, 200)}`;
  if (!hostile.mustRefuse || response.status !== 400) return undefined;
  const named = body.error.param ?? /^[\w.[\]]+/.exec(body.error.message)?.[0] ?? '';
  return namesField(named, hostile.field)
    ? undefined
    : `${hostile.label}: the 400 names ${named || 'no field'}: ${body.error.message.slice(0, 200)}`;
}

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

describe('a fuzz pass of 2,400 malformed and hostile bodies', () => {
  let gateway: RunningGateway;
  beforeAll(async () => {
    gateway = await startGateway({
      server: { bodyLimitBytes: 1024 * 1024 },
      limits: { maxMessages: 50, maxJsonNodes: 1000 },
      models: [
        { name: 'stub', engine: 'stub' },
        { name: 'capped', engine: 'stub', maxTokensLimit: 64 },
      ],
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('answers every one with a 4xx in its protocol shape, never a 5xx or a hang, and keeps serving', async () => {
    const cases = hostileCases(2_400, seededRandom(20_261_201), {
      maxTokensModel: 'capped',
      maxTokens: 64,
      maxMessages: 50,
    });
    const problems: string[] = [];
    const workers = Array.from({ length: 8 }, async (_, worker) => {
      for (let index = worker; index < cases.length; index += 8) {
        const problem = await send(gateway.url, cases[index]);
        if (problem !== undefined) problems.push(`#${index} ${problem}`);
      }
    });
    await Promise.all(workers);
    expect(problems.slice(0, 30)).toEqual([]);
    expect(problems).toHaveLength(0);

    for (const protocol of PROTOCOLS) {
      const outcome = await postStream(gateway.url, protocol.path, protocol.body('stub', 'still serving'));
      expect(protocol.endedWell(outcome.frames)).toBe(true);
    }
    const capped = await postStream(
      gateway.url,
      CHAT.path,
      CHAT.body('capped', Array.from({ length: 100 }, (_, index) => `w${index}`).join(' ')),
    );
    expect(capped.frames.filter(CHAT.isContent)).toHaveLength(64);
    const stub = gateway.registry.resolve('stub').engine as StubEngine;
    expect(await eventually(() => stub.activeGenerations === 0 && stub.pendingTimers === 0)).toBe(true);
  }, 90_000);

  it('walks every field of every body with hostile shapes: never a 5xx, a nested array always a 400 naming the field', async () => {
    const post = (path: string, body: unknown) =>
      fetch(gateway.url + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    // The bodies walked are served as they are: each refusal below is the shape's doing.
    for (const endpoint of SHAPE_ENDPOINTS)
      expect((await post(endpoint.path, endpoint.body())).status, endpoint.path).toBe(200);
    const cases = hostileShapeCases();
    const problems: string[] = [];
    const workers = Array.from({ length: 16 }, async (_, worker) => {
      for (let index = worker; index < cases.length; index += 16) {
        const problem = await sendShape(gateway.url, cases[index]);
        if (problem !== undefined) problems.push(problem);
      }
    });
    await Promise.all(workers);
    expect(problems.slice(0, 30)).toEqual([]);
    expect(problems).toHaveLength(0);
  }, 120_000);

  it('refuses the shapes that crashed decoders with a 400 naming the field, on every API', async () => {
    const post = (path: string, body: unknown) =>
      fetch(gateway.url + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const user = [{ role: 'user', content: 'hi' }];
    const badCall = [
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: [[]] }] },
      ...user,
    ];
    const anthropic = { model: 'stub', messages: user };
    const openai: Array<[string, unknown, string]> = [
      ['/v1/chat/completions', { model: 'stub', messages: user, tools: [{ type: 'function' }] }, 'tools[0].function'],
      ['/v1/chat/completions', { model: 'stub', messages: user, tools: [[]] }, 'tools'],
      ['/v1/chat/completions', { model: 'stub', messages: user, tool_choice: null }, 'tool_choice'],
      ['/v1/chat/completions', { model: 'stub', messages: [[[]]] }, 'messages'],
      ['/v1/chat/completions', { model: 'stub', messages: badCall }, 'messages[0].tool_calls[0].function'],
      ...['/v1/responses', '/v1/responses/input_tokens'].flatMap((path): Array<[string, unknown, string]> => [
        [path, { model: 'stub', input: 'hi', tools: [{ type: 'function' }] }, 'tools[0].name'],
        [path, { model: 'stub', input: 'hi', tools: [[]] }, 'tools[0]'],
        [path, { model: 'stub', input: 'hi', tool_choice: null }, 'tool_choice'],
        [path, { model: 'stub', input: [[[]]] }, 'input'],
        [path, { model: 'stub', input: 'hi', reasoning: [[]] }, 'reasoning'],
      ]),
    ];
    for (const [path, body, param] of openai) {
      const response = await post(path, body);
      expect(response.status, `${path} ${JSON.stringify(body)}`).toBe(400);
      expect((await readJson(response)).error, `${path} ${JSON.stringify(body)}`).toMatchObject({
        type: 'invalid_request_error',
        param,
      });
    }
    for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
      for (const [field, body] of [
        ['tools[0]', { ...anthropic, tools: [[]] }],
        ['tool_choice', { ...anthropic, tool_choice: null }],
        ['messages[0]', { ...anthropic, messages: [[[]]] }],
        ['thinking', { ...anthropic, thinking: [[]] }],
      ] as const) {
        const response = await post(path, { max_tokens: 8, ...body });
        expect(response.status, `${path} ${field}`).toBe(400);
        expect(await readJson(response), `${path} ${field}`).toEqual({
          type: 'error',
          error: {
            type: 'invalid_request_error',
            message: expect.stringMatching(new RegExp(`^${field.replace(/[[\]]/g, '\\$&')} must be a JSON object$`)),
          },
        });
      }
    }
  });

  it('walks every field that a request DTO declares', () => {
    const declared = [ChatDtos, ResponsesDtos, MessagesDtos, FunctionDtos].flatMap((module) =>
      Object.values(module).flatMap((exported) =>
        typeof exported === 'function'
          ? getMetadataStorage()
              .getTargetValidationMetadatas(exported, '', true, false)
              .map((rule) => `${exported.name}.${rule.propertyName}`)
          : [],
      ),
    );
    const walked = walkedFieldNames();
    expect(declared.length).toBeGreaterThan(50);
    expect([...new Set(declared)].filter((field) => !walked.has(field.split('.')[1]))).toEqual([]);
  });

  it('names the protocol field at fault for the max_tokens ceiling and the message limit', async () => {
    const post = (path: string, body: unknown) =>
      fetch(gateway.url + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const chat = await readJson(
      await post('/v1/chat/completions', {
        model: 'capped',
        max_completion_tokens: 65,
        messages: [{ role: 'user', content: 'x' }],
      }),
    );
    expect(chat.error).toMatchObject({
      param: 'max_completion_tokens',
      code: 'max_tokens_exceeded',
      type: 'invalid_request_error',
    });
    const responses = await readJson(
      await post('/v1/responses', { model: 'capped', max_output_tokens: 100, input: 'x' }),
    );
    expect(responses.error.param).toBe('max_output_tokens');
    const messages = await post('/v1/messages', {
      model: 'capped',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(messages.status).toBe(400);
    expect((await readJson(messages)).error).toEqual({
      type: 'invalid_request_error',
      message: expect.stringMatching(/^max_tokens is 100, above the limit of 64/),
    });
    const input = Array.from({ length: 51 }, () => ({ role: 'user', content: 'x' }));
    expect((await readJson(await post('/v1/responses', { model: 'stub', input }))).error).toMatchObject({
      param: 'input',
      code: 'too_many_messages',
    });
  });

  it('refuses a body of more objects and arrays than limits.maxJsonNodes before validation, in each protocol’s shape', async () => {
    // 40 messages (within maxMessages) of 30 parts each: 1,282 objects and arrays.
    const parts = Array.from({ length: 30 }, () => ({ type: 'text', text: 'x' }));
    const messages = Array.from({ length: 40 }, () => ({ role: 'user', content: parts }));
    const post = (path: string, body: unknown) =>
      fetch(gateway.url + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const chat = await post('/v1/chat/completions', { model: 'stub', messages });
    expect(chat.status).toBe(400);
    expect((await readJson(chat)).error).toMatchObject({
      type: 'invalid_request_error',
      code: 'too_many_json_nodes',
      message: 'The request body holds more than 1000 objects and arrays.',
    });
    const anthropic = await post('/v1/messages', { model: 'stub', max_tokens: 8, messages });
    expect(anthropic.status).toBe(400);
    expect(await readJson(anthropic)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    const within = await post('/v1/chat/completions', { model: 'stub', messages: messages.slice(0, 20) });
    expect(within.status).toBe(200);
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
