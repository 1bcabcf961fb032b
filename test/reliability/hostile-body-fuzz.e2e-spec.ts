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
import { postStream, seededRandom } from '../support/http-stream.js';
import { CHAT, PROTOCOLS } from '../support/protocol-streams.js';
import { hasProtocolErrorShape } from '../support/protocol-errors.js';

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
