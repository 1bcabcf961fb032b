import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TINY_SHAPE, writeTinyGguf } from '../scripts/tiny-gguf/write-tiny-gguf.js';
import { startGateway, type RunningGateway } from './support/gateway.js';

// Raw completions on the llama engine: the tiny random-weight GGUF, and the same with Qwen's
// fill-in-the-middle tokens added, for infill.
let dir: string;
let gateway: RunningGateway;
let client: OpenAI;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gantry-llama-completions-'));
  const plain = join(dir, 'tiny.gguf');
  const fim = join(dir, 'tiny-fim.gguf');
  writeTinyGguf(plain);
  writeTinyGguf(fim, { ...DEFAULT_TINY_SHAPE, fillInTheMiddle: true });
  const common = { engine: 'llama', threads: 1, sequences: 1, contextSize: 512 };
  gateway = await startGateway({
    models: [
      { name: 'tiny', modelPath: plain, ...common },
      { name: 'tiny-fim', modelPath: fim, ...common },
    ],
  });
  client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
}, 120_000);
afterAll(async () => {
  await gateway?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('completions on the llama engine', () => {
  it('continues a raw prompt, whole and streamed, its tokens counted without a chat template', async () => {
    const whole = await client.completions.create({ model: 'tiny', prompt: 'hello world', max_tokens: 6, seed: 1 });
    expect(whole.choices[0].finish_reason).toBe('length');
    expect(whole.usage?.completion_tokens).toBe(6);
    // "hello world": five letters (the tiny vocabulary has "hello" only after a space) and "▁world";
    // the chat template would add a dozen tokens around them.
    expect(whole.usage?.prompt_tokens).toBe(6);
    let text = '';
    for await (const chunk of await client.completions.create({
      model: 'tiny',
      prompt: [[5, 6, 7]],
      max_tokens: 6,
      stream: true,
      stream_options: { include_usage: true },
    })) {
      text += chunk.choices[0]?.text ?? '';
      if (chunk.usage) expect(chunk.usage.prompt_tokens).toBe(3);
    }
    expect(text.length).toBeGreaterThan(0);
  });

  it('generates several prompts times n on one sequence, each prompt counted once', async () => {
    const several = await client.completions.create({
      model: 'tiny',
      prompt: ['hello world', 'gantry'],
      n: 2,
      max_tokens: 3,
      seed: 4,
    });
    expect(several.choices.map((choice) => [choice.index, choice.finish_reason])).toEqual([
      [0, 'length'],
      [1, 'length'],
      [2, 'length'],
      [3, 'length'],
    ]);
    expect(several.usage?.completion_tokens).toBe(12);
    const one = await client.completions.create({ model: 'tiny', prompt: ['hello world', 'gantry'], max_tokens: 3 });
    expect(several.usage?.prompt_tokens).toBe(one.usage?.prompt_tokens);
  });

  it('echoes the prompt before the completion when asked', async () => {
    const echoed = await client.completions.create({
      model: 'tiny',
      prompt: 'gantry stream',
      max_tokens: 3,
      echo: true,
    });
    expect(echoed.choices[0].text.startsWith('gantry stream')).toBe(true);
  });

  it('fills in the middle with the model’s FIM tokens; a model without them refuses a suffix', async () => {
    const plain = await client.completions.create({ model: 'tiny-fim', prompt: 'hello', max_tokens: 2 });
    const infill = await client.completions.create({
      model: 'tiny-fim',
      prompt: 'hello',
      suffix: 'world',
      max_tokens: 2,
    });
    // The prompt framed: <|fim_prefix|> hello <|fim_suffix|> world <|fim_middle|>: three tokens, and "world" in five letters.
    expect(infill.usage!.prompt_tokens).toBe(plain.usage!.prompt_tokens + 3 + 5);
    await expect(
      client.completions.create({ model: 'tiny', prompt: 'hello', suffix: 'world', max_tokens: 2 }),
    ).rejects.toMatchObject({ status: 400, code: 'suffix_not_supported', param: 'suffix' });
  });
});
