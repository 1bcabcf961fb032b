import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startGateway, type RunningGateway } from './support/gateway.js';
import { postSse } from './support/sse-client.js';

// A file of its own: nestjs-pino keeps one root logger per process, made by the first gateway.
const ask = (text: string) => [{ role: 'user' as const, content: text }];

describe('request logs', () => {
  const lines: Array<Record<string, unknown>> = [];
  const raw: string[] = [];
  let gateway: RunningGateway;

  beforeAll(async () => {
    const destination = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) {
          raw.push(line);
          lines.push(JSON.parse(line));
        }
        done();
      },
    });
    gateway = await startGateway(
      {
        keepalive: { mode: 'chunks', intervalMs: 100 },
        observability: { logging: { level: 'info' } },
        models: [{ name: 'stub', engine: 'stub' }, { name: 'slow', engine: 'stub', prefillMs: 2000 }],
      },
      { observability: { logDestination: destination } },
    );
  });
  afterAll(() => gateway?.close());

  it('writes one line per request with its fields, and no prompt, output or key', async () => {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-very-secret-key', 'x-request-id': 'req-42' },
      body: JSON.stringify({ model: 'stub', messages: ask('TOP-SECRET-PROMPT words') }),
    });
    expect(response.headers.get('x-request-id')).toBe('req-42');
    await response.json();
    expect(await eventually(() => lines.some((line) => line.requestId === 'req-42'))).toBe(true);
    const line = lines.find((candidate) => candidate.requestId === 'req-42')!;
    expect(line).toMatchObject({
      level: 30,
      api: 'chat',
      model: 'stub',
      status: 200,
      outcome: 'completed',
      promptTokens: 2,
      completionTokens: 2,
      finishReason: 'stop',
      msg: 'request completed',
      context: 'Request',
    });
    expect(line.ttftMs).toEqual(expect.any(Number));
    expect(line.durationMs).toEqual(expect.any(Number));
    expect(lines.filter((candidate) => candidate.requestId === 'req-42')).toHaveLength(1);
    expect(raw.join('\n')).not.toMatch(/TOP-SECRET|sk-very-secret-key/);
  });

  it('logs a client hang-up as such, at info level, with a generated request id returned to the client', async () => {
    let returnedId: string | null = null;
    const exchange = await postSse(`${gateway.url}/v1/chat/completions`, { model: 'slow', stream: true, messages: ask('x') }, { onFrame: () => true });
    returnedId = exchange.headers.get('x-request-id');
    expect(returnedId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await eventually(() => lines.some((line) => line.requestId === returnedId))).toBe(true);
    expect(lines.find((line) => line.requestId === returnedId)).toMatchObject({ level: 30, outcome: 'client_closed', phase: 'prefill', status: 499 });
  });
});
