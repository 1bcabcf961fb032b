import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { generationRequest } from '../../../test/support/requests.js';
import { estimatePromptTokens } from '../../engine/token-estimate.js';
import { countUpstreamPromptTokens } from './upstream-token-count.js';

type Route = (body: Record<string, any>, response: ServerResponse) => void;

const servers: Server[] = [];
const seen: Array<{ path: string; body: Record<string, any>; authorization?: string }> = [];

/** A fake upstream at `/v1` whose root answers `routes` by path; others get 404. */
async function upstream(routes: Record<string, Route>): Promise<string> {
  const server = createServer((request: IncomingMessage, response) => {
    let text = '';
    request.on('data', (chunk) => (text += chunk));
    request.on('end', () => {
      const body = text ? JSON.parse(text) : {};
      seen.push({ path: request.url ?? '', body, authorization: request.headers.authorization });
      const route = routes[request.url ?? ''];
      if (route) route(body, response);
      else response.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

const json = (response: ServerResponse, body: unknown) =>
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
const target = (baseUrl: string | undefined, timeoutMs?: number) => ({
  baseUrl,
  upstreamModel: 'org/model',
  headers: { authorization: 'Bearer sk-up' },
  timeoutMs,
});
const request = generationRequest({
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: [{ type: 'text', text: 'Hello there general Kenobi' }] },
  ],
});
const estimate = estimatePromptTokens(request);

afterEach(async () => {
  seen.length = 0;
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe('countUpstreamPromptTokens', () => {
  it('asks a vLLM-style /tokenize with the chat messages, the upstream’s model name and the headers', async () => {
    const url = await upstream({
      '/tokenize': (_body, response) => json(response, { count: 17, max_model_len: 4096, tokens: [] }),
    });
    expect(await countUpstreamPromptTokens(request, target(url))).toBe(17);
    expect(seen[0]).toEqual({
      path: '/tokenize',
      authorization: 'Bearer sk-up',
      body: {
        model: 'org/model',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hello there general Kenobi' },
        ],
        add_generation_prompt: true,
      },
    });
  });

  it('renders then tokenizes on a llama.cpp server, whose /tokenize wants text', async () => {
    const url = await upstream({
      '/tokenize': (body, response) =>
        json(response, {
          tokens:
            typeof body.content === 'string' ? body.content.split(' ').map((_: string, index: number) => index) : [],
        }),
      '/apply-template': (body, response) =>
        json(response, {
          prompt: `<s> ${body.messages.map((message: { content: string }) => message.content).join(' ')} </s>`,
        }),
    });
    // "<s> Be brief. Hello there general Kenobi </s>": 8 pieces.
    expect(await countUpstreamPromptTokens(request, target(url))).toBe(8);
    expect(seen.map((entry) => entry.path)).toEqual(['/tokenize', '/apply-template', '/tokenize']);
    expect(seen[2].body).toMatchObject({ add_special: true, parse_special: true });
    // Remembered: the next count goes straight to the template.
    seen.length = 0;
    expect(await countUpstreamPromptTokens(request, target(url))).toBe(8);
    expect(seen.map((entry) => entry.path)).toEqual(['/apply-template', '/tokenize']);
  });

  it('estimates when the upstream has no tokenizer endpoint, and does not ask it again for a while', async () => {
    const url = await upstream({});
    expect(await countUpstreamPromptTokens(request, target(url))).toBe(estimate);
    expect(await countUpstreamPromptTokens(request, target(url))).toBe(estimate);
    expect(seen.map((entry) => entry.path)).toEqual(['/tokenize']);
  });

  it('estimates within its time budget when the tokenizer is slow', async () => {
    const url = await upstream({
      '/tokenize': (_body, response) => setTimeout(() => json(response, { count: 1 }), 2000).unref(),
    });
    const started = performance.now();
    expect(await countUpstreamPromptTokens(request, target(url, 100))).toBe(estimate);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('estimates on an error answer, a refused connection, an odd answer or no replica', async () => {
    const failing = await upstream({ '/tokenize': (_body, response) => response.writeHead(500).end('boom') });
    expect(await countUpstreamPromptTokens(request, target(failing))).toBe(estimate);
    const odd = await upstream({ '/tokenize': (_body, response) => json(response, { count: -3 }) });
    expect(await countUpstreamPromptTokens(request, target(odd))).toBe(estimate);
    const closed = await upstream({});
    const server = servers.pop()!;
    await new Promise((resolve) => server.close(resolve));
    expect(await countUpstreamPromptTokens(request, target(closed))).toBe(estimate);
    expect(await countUpstreamPromptTokens(request, target(undefined))).toBe(estimate);
  });
});
