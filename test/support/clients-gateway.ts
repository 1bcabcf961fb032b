import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startMockUpstream, type MockUpstream } from '../../apps/mock-upstream/mock-upstream.js';
import { writeTinyGguf } from '../../scripts/tiny-gguf/write-tiny-gguf.js';
import { startGateway, type RunningGateway } from './gateway.js';

export const ANTHROPIC_HEADERS = { 'anthropic-version': '2023-06-01', 'x-api-key': 'sk-unused' };
export const CLAUDE_CODE_HEADERS = {
  ...ANTHROPIC_HEADERS,
  'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14',
};
export const bashTool = {
  name: 'Bash',
  description: 'Runs a shell command.',
  input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
};
export const weatherTool = {
  name: 'get_weather',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } },
};

/** An upstream that refuses every chat request as vLLM refuses a prompt longer than the model's context. */
async function contextRefusingUpstream(): Promise<Server> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const body = JSON.stringify({
        error: {
          message:
            "This model's maximum context length is 4096 tokens. However, you requested 5120 tokens (4608 in the messages, 512 in the completion). Please reduce the length of the messages or completion.",
          type: 'BadRequestError',
          param: null,
          code: 400,
        },
      });
      response.writeHead(400, { 'content-type': 'application/json' }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** A gateway of the models real clients are tried on: stub, vLLM-style upstreams (one without /tokenize, one too slow to count, one refusing every prompt as too long) and llama. */
export interface ClientsGateway {
  mock: MockUpstream;
  /** A second upstream, told to answer /tokenize with 404 (what an upstream without it does). */
  noTokenizer: MockUpstream;
  gateway: RunningGateway;
  anthropic: Anthropic;
  openai: OpenAI;
  close(): Promise<void>;
}

export async function startClientsGateway(): Promise<ClientsGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'gantry-clients-'));
  const modelPath = join(dir, 'tiny.gguf');
  writeTinyGguf(modelPath);
  const [mock, noTokenizer] = await Promise.all([
    startMockUpstream({ servedModel: 'org/served-model' }),
    startMockUpstream({ servedModel: 'org/served-model' }),
  ]);
  const contextUpstream = await contextRefusingUpstream();
  const vllm = { engine: 'http', upstreams: [mock.url], upstreamModel: 'org/served-model', healthCheckIntervalMs: 0 };
  const gateway = await startGateway({
    keepalive: { mode: 'chunks', intervalMs: 100 },
    models: [
      { name: 'stub', engine: 'stub' },
      { name: 'org/stub', engine: 'stub' },
      { name: 'vllm', ...vllm },
      { name: 'vllm-no-tokenize', ...vllm, upstreams: [noTokenizer.url], headers: { 'x-mock-tokenize': 'absent' } },
      { name: 'vllm-slow-tokenize', ...vllm, headers: { 'x-mock-tokenize-delay-ms': '3000' } },
      {
        name: 'vllm-small',
        engine: 'http',
        upstreams: [`http://127.0.0.1:${(contextUpstream.address() as AddressInfo).port}/v1`],
        healthCheckIntervalMs: 0,
      },
      { name: 'tiny', engine: 'llama', modelPath, threads: 1, sequences: 1, contextSize: 1024, gpu: false },
      { name: 'tiny-context', engine: 'llama', modelPath, threads: 1, sequences: 1, contextSize: 64, gpu: false },
    ],
  });
  const anthropic = new Anthropic({ baseURL: gateway.url, apiKey: 'sk-unused', maxRetries: 0 });
  const openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'sk-unused', maxRetries: 0 });
  return {
    mock,
    noTokenizer,
    gateway,
    anthropic,
    openai,
    close: async () => {
      await gateway.close();
      await Promise.all([mock.close(), noTokenizer.close()]);
      await new Promise((resolve) => contextUpstream.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** What Claude Code 2.1 sends for `claude -p "say hi"`, trimmed: cached system blocks, tools, a system message mid-conversation. */
export const claudeCodeBody = (model: string) => ({
  model,
  max_tokens: 32000,
  stream: true,
  temperature: 1,
  metadata: { user_id: 'user_abc_account__session_123' },
  system: [
    { type: 'text', text: 'You are Claude Code, an interactive CLI.', cache_control: { type: 'ephemeral' } },
    { type: 'text', text: 'Be concise.' },
  ],
  tools: [bashTool],
  messages: [
    { role: 'user', content: [{ type: 'text', text: '<system-reminder>Context: a repo.</system-reminder>' }] },
    { role: 'system', content: [{ type: 'text', text: 'The user is in plan mode.' }] },
    { role: 'user', content: [{ type: 'text', text: 'say hi', cache_control: { type: 'ephemeral' } }] },
  ],
});
