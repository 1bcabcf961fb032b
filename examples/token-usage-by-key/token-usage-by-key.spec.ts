import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../test/support/gateway.js';
import { scrape, valueOf } from '../../test/support/prometheus.js';
import { keyIdOf } from './token-usage-by-key.hook.js';

let gateway: RunningGateway;

beforeAll(async () => {
  // Loaded by path from the configuration, as an operator would.
  const plugin = fileURLToPath(new URL('./token-usage-by-key.module.ts', import.meta.url));
  gateway = await startGateway({ plugins: [plugin], models: [{ name: 'stub', engine: 'stub' }] });
});
afterAll(() => gateway?.close());

describe('the token-usage-by-key example plugin', () => {
  it('counts tokens per hashed API key on /metrics, without the keys themselves', async () => {
    const ask = (apiKey: string, text: string) =>
      new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey, maxRetries: 0 }).chat.completions.create({
        model: 'stub',
        messages: [{ role: 'user', content: text }],
      });
    await ask('key-alpha', 'one two three');
    await ask('key-alpha', 'four five');
    await ask('key-beta', 'six');

    const samples = await scrape(gateway.url);
    const count = (key: string, kind: string) =>
      valueOf(samples, 'gantry_tokens_by_api_key_total', { key: keyIdOf(key), kind });
    expect(count('key-alpha', 'prompt')).toBe(5);
    expect(count('key-alpha', 'completion')).toBe(5);
    expect(count('key-beta', 'completion')).toBe(1);
    const text = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(text).not.toContain('key-alpha');
  });
});
