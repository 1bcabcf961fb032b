import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJson, startGateway, type RunningGateway } from './support/gateway.js';

/** Tenants over a real gateway: named keys, model access, fair queues, token limits, per-tenant metrics. */

const MODELS = [
  { name: 'llama-small', engine: 'stub' },
  { name: 'llama-large', engine: 'stub' },
  { name: 'qwen', engine: 'stub' },
];

const openaiFor = (url: string, key: string) => new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 });
const anthropicFor = (url: string, key: string) => new Anthropic({ baseURL: url, apiKey: key, maxRetries: 0 });

describe('model access of a named key', () => {
  let gateway: RunningGateway;

  beforeAll(async () => {
    gateway = await startGateway({
      responses: { store: 'off' },
      auth: { apiKeys: ['sk-plain', { name: 'team-llama', key: 'sk-llama', models: ['llama-*'] }] },
      models: MODELS,
    });
  });
  afterAll(() => gateway.close());

  it('answers a model the key may not use with 404 in each protocol’s shape, as an unknown one', async () => {
    const openai = openaiFor(gateway.url, 'sk-llama');
    const anthropic = anthropicFor(gateway.url, 'sk-llama');
    const chat = await openai.chat.completions.create({ model: 'qwen', messages: [{ role: 'user', content: 'x' }] }).catch((error: unknown) => error);
    expect(chat).toBeInstanceOf(OpenAI.NotFoundError);
    expect((chat as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({ type: 'invalid_request_error', code: 'model_not_found', param: 'model' });
    const unknown = await openai.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }).catch((error: unknown) => error);
    expect((unknown as Error).message.replace('nope', 'qwen')).toBe((chat as Error).message);
    const responses = await openai.responses.create({ model: 'qwen', input: 'x' }).catch((error: unknown) => error);
    expect(responses).toBeInstanceOf(OpenAI.NotFoundError);
    const messages = await anthropic.messages.create({ model: 'qwen', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }).catch((error: unknown) => error);
    expect(messages).toBeInstanceOf(Anthropic.NotFoundError);
    expect((messages as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    const counted = await anthropic.messages.countTokens({ model: 'qwen', messages: [{ role: 'user', content: 'x' }] }).catch((error: unknown) => error);
    expect(counted).toBeInstanceOf(Anthropic.NotFoundError);
    // Its own models answer.
    const answer = await openai.chat.completions.create({ model: 'llama-small', messages: [{ role: 'user', content: 'mine' }] });
    expect(answer.choices[0].message.content).toBe('mine');
  });

  it('lists and retrieves only the key’s models in both shapes; a key without `models` sees them all', async () => {
    const listed = async (key: string) => {
      const openai: string[] = [];
      for await (const model of openaiFor(gateway.url, key).models.list()) openai.push(model.id);
      const anthropic: string[] = [];
      for await (const model of anthropicFor(gateway.url, key).models.list({ limit: 1 })) anthropic.push(model.id);
      return { openai, anthropic };
    };
    expect(await listed('sk-llama')).toEqual({ openai: ['llama-small', 'llama-large'], anthropic: ['llama-small', 'llama-large'] });
    expect(await listed('sk-plain')).toEqual({ openai: ['llama-small', 'llama-large', 'qwen'], anthropic: ['llama-small', 'llama-large', 'qwen'] });
    expect(await openaiFor(gateway.url, 'sk-llama').models.retrieve('llama-large')).toMatchObject({ id: 'llama-large' });
    expect(await openaiFor(gateway.url, 'sk-llama').models.retrieve('qwen').catch((error: unknown) => error)).toBeInstanceOf(OpenAI.NotFoundError);
    const hidden = await anthropicFor(gateway.url, 'sk-llama').models.retrieve('qwen').catch((error: unknown) => error);
    expect((hidden as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({ error: { type: 'not_found_error' } });
    const page = await readJson(await fetch(`${gateway.url}/v1/models?limit=1`, { headers: { 'x-api-key': 'sk-llama', 'anthropic-version': '2023-06-01' } }));
    expect(page).toMatchObject({ has_more: true, first_id: 'llama-small', last_id: 'llama-small' });
  });
});
