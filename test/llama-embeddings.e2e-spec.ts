import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeTinyGguf } from '../scripts/tiny-gguf/write-tiny-gguf.js';
import { readJson, startGateway, type RunningGateway } from './support/gateway.js';

// Embeddings on the llama engine: the tiny random-weight GGUF, through node-llama-cpp's embedding context.
let dir: string;
let gateway: RunningGateway;
let client: OpenAI;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gantry-llama-embed-'));
  const modelPath = join(dir, 'tiny.gguf');
  writeTinyGguf(modelPath);
  gateway = await startGateway({
    models: [{ name: 'tiny', engine: 'llama', modelPath, threads: 1, sequences: 1, contextSize: 256 }],
  });
  client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
}, 120_000);
afterAll(async () => {
  await gateway?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('embeddings on the llama engine', () => {
  it('embeds texts and token ids: the same input, the same vector, its tokens counted', async () => {
    const answer = await client.embeddings.create({ model: 'tiny', input: ['hello world', 'other words'] });
    const again = await client.embeddings.create({ model: 'tiny', input: 'hello world', encoding_format: 'float' });
    expect(answer.data).toHaveLength(2);
    expect(answer.data[0].embedding.length).toBeGreaterThan(0);
    expect(answer.data[0].embedding.every((value) => Number.isFinite(value))).toBe(true);
    expect(again.data[0].embedding).toEqual(answer.data[0].embedding);
    expect(answer.data[1].embedding).not.toEqual(answer.data[0].embedding);
    expect(answer.usage.prompt_tokens).toBeGreaterThan(0);
    const ids = await client.embeddings.create({ model: 'tiny', input: [[1, 2, 3]] });
    expect(ids.usage.prompt_tokens).toBe(3);
  });

  it('refuses an input longer than the context in OpenAI’s shape', async () => {
    const response = await fetch(`${gateway.url}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny', input: [Array.from({ length: 400 }, () => 5)] }),
    });
    expect(response.status).toBe(400);
    expect((await readJson(response)).error).toMatchObject({ param: 'input', code: 'context_length_exceeded' });
  });
});
