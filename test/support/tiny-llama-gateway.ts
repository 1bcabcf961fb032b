import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getLlama, type LlamaModel } from 'node-llama-cpp';
import OpenAI from 'openai';
import { afterAll, beforeAll } from 'vitest';
import { writeTinyGguf } from '../../scripts/tiny-gguf/write-tiny-gguf.js';
import { startGateway, type RunningGateway } from './gateway.js';

/** The system prompt the llama specs send. */
export const SYSTEM = 'You are a tiny test model.';

/** A conversation of SYSTEM and one user message. */
export const conversation = (text: string) => [
  { role: 'system' as const, content: SYSTEM },
  { role: 'user' as const, content: text },
];

/** A gateway serving the tiny GGUF written here through the llama engine, several ways. */
export interface TinyLlamaGateway {
  modelPath: string;
  gateway: RunningGateway;
  client: OpenAI;
  /** The same GGUF loaded vocabulary-only, to count tokens independently of the engine. */
  vocab: LlamaModel;
  /** Tokens in the prompt of conversation(text), as the model's ChatML template renders it, by vocab. */
  promptTokenCount(text: string): number;
  close(): Promise<void>;
}

export async function startTinyLlamaGateway(): Promise<TinyLlamaGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'gantry-llama-'));
  const modelPath = join(dir, 'tiny.gguf');
  writeTinyGguf(modelPath);
  const gateway = await startGateway({
    keepalive: { mode: 'chunks', intervalMs: 50 },
    models: [
      { name: 'tiny', engine: 'llama', modelPath, threads: 1, sequences: 2, contextSize: 1024 },
      { name: 'tiny-single', engine: 'llama', modelPath, threads: 1, sequences: 1, contextSize: 4096 },
      {
        name: 'tiny-prefill',
        engine: 'llama',
        modelPath,
        threads: 1,
        sequences: 1,
        contextSize: 4096,
        batchSize: 32,
        gpu: false,
      },
      {
        name: 'tiny-no-think',
        engine: 'llama',
        modelPath,
        threads: 1,
        sequences: 1,
        contextSize: 256,
        disableReasoning: true,
      },
    ],
  });
  const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const llama = await getLlama({ gpu: false, build: 'never' });
  const vocab = await llama.loadModel({ modelPath, vocabOnly: true });
  return {
    modelPath,
    gateway,
    client,
    vocab,
    promptTokenCount: (text) =>
      vocab.tokenize(
        `<|im_start|>system\n${SYSTEM}<|im_end|>\n<|im_start|>user\n${text}<|im_end|>\n<|im_start|>assistant\n`,
        true,
      ).length,
    close: async () => {
      await gateway.close();
      await vocab.dispose();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Starts the gateway before the enclosing suite's tests, hands it to `take`, and closes it after them. */
export function useTinyLlamaGateway(take: (running: TinyLlamaGateway) => void): void {
  let running: TinyLlamaGateway | undefined;
  beforeAll(async () => {
    running = await startTinyLlamaGateway();
    take(running);
  });
  afterAll(async () => {
    await running?.close();
  });
}
