import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLogs } from '../support/log-capture.js';
import type { MockBehaviour } from '../../apps/mock-upstream/mock-behaviour.js';
import { startMockUpstream, type MockUpstream } from '../../apps/mock-upstream/mock-upstream.js';
import { eventually, startGateway, type RunningGateway } from '../support/gateway.js';

const ask = (text: string) => [{ role: 'user' as const, content: text }];
const behaving = (behaviour: Partial<MockBehaviour>) => ({ 'x-mock-behaviour': JSON.stringify(behaviour) });
const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

// First in the file: the pino root logger is process-wide, made by the first gateway.
describe('upstream error text reaches neither clients nor logs with secrets or the prompt', () => {
  const apiKey = 'sk-upstream-key-8d1e4b7a';
  const secretHeader = 'hdr-secret-5f2c9a31';
  // The first word is what the in-band models answer before they fail: only it may come back.
  const prompt = 'hello PROMPT-MARKER-c41d7e only the client may see this';
  // A key whose spellings differ: `/` is escaped in JSON, `+` and `/` percent-encoded.
  const slashedKey = 'sk-up/key+7c2e9f1b/a==';
  /** How the mock's `encoded-key` failure spells the key. */
  const echoedSpellings = [
    slashedKey.replaceAll('/', '\\/'),
    [...slashedKey].map((character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
    Buffer.from(slashedKey).toString('base64'),
    Buffer.from(slashedKey).toString('base64url'),
    Buffer.from(`user:${slashedKey}`).toString('base64'),
    encodeURIComponent(slashedKey).toLowerCase(),
  ];
  const slashedKeySpellings = [slashedKey, ...echoedSpellings, encodeURIComponent(slashedKey)];
  const secrets = [apiKey, secretHeader, 'PROMPT-MARKER', ...slashedKeySpellings];
  const { destination, raw, lines } = captureLogs();
  let mock: MockUpstream;
  let gateway: RunningGateway;
  /** Generation requests sent through the gateway: each has its request log line. */
  let sent = 0;

  const model = (name: string, behaviour: Partial<MockBehaviour>, extra: Record<string, unknown> = {}) => ({
    name,
    engine: 'http',
    upstreams: [mock.url],
    apiKey,
    healthCheckIntervalMs: 0,
    maxFailures: 1000,
    headers: { 'x-secret-token': secretHeader, ...behaving(behaviour) },
    ...extra,
  });

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway(
      {
        keepalive: { mode: 'chunks', intervalMs: 10_000 },
        observability: { logging: { level: 'info' } },
        models: [
          model('unauthorized', { failure: 'status', failureStatus: 401, failureQuotes: 'headers' }),
          model('forbidden', { failure: 'status', failureStatus: 403, failureQuotes: 'headers' }),
          model('bad-request', { failure: 'status', failureStatus: 400, failureQuotes: 'headers' }),
          model('server-error', { failure: 'status', failureStatus: 500, failureQuotes: 'prompt' }),
          model('ejected', { failure: 'status', failureStatus: 500, failureQuotes: 'prompt' }, { maxFailures: 1 }),
          // Not continued elsewhere: only the first word of the echoed prompt may come back.
          model(
            'in-band-401',
            { failure: 'error', failureStatus: 401, failAfterTokens: 1, failureQuotes: 'headers' },
            { midStreamFailover: { enabled: false } },
          ),
          model('in-band-400', { failure: 'error', failureStatus: 400, failAfterTokens: 1, failureQuotes: 'headers' }),
          model(
            'in-band-500',
            { failure: 'error', failureStatus: 500, failAfterTokens: 1, failureQuotes: 'prompt' },
            { midStreamFailover: { enabled: false } },
          ),
          model(
            'encoded-key',
            { failure: 'status', failureStatus: 400, failureQuotes: 'encoded-key' },
            { apiKey: slashedKey },
          ),
        ],
      },
      { observability: { logDestination: destination } },
    );
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  /** The client-visible answer (status and text) of one request on each API, non-streaming and streaming. */
  async function everyAnswer(name: string) {
    sent += 4;
    const answer = async (path: string, body: Record<string, unknown>) => {
      const response = await post(`${gateway.url}${path}`, body);
      return { status: response.status, body: await response.text() };
    };
    const chat = await answer('/v1/chat/completions', { model: name, messages: ask(prompt) });
    const messages = await answer('/v1/messages', { model: name, max_tokens: 50, messages: ask(prompt) });
    const chatStream = await answer('/v1/chat/completions', { model: name, messages: ask(prompt), stream: true });
    const messagesStream = await answer('/v1/messages', {
      model: name,
      max_tokens: 50,
      messages: ask(prompt),
      stream: true,
    });
    // The JSON of each `data:` line of an SSE answer (none in a JSON answer).
    const streamed = (text: string): Array<Record<string, any>> =>
      text
        .split('\n')
        .flatMap((line) => (line.startsWith('data: ') && line !== 'data: [DONE]' ? [JSON.parse(line.slice(6))] : []));
    return {
      chat,
      messages,
      chatStream,
      messagesStream,
      texts: [chat.body, messages.body, chatStream.body, messagesStream.body],
      inBand: {
        chat: streamed(chatStream.body).find((chunk) => chunk.error)?.error,
        messages: streamed(messagesStream.body).find((event) => event.type === 'error')?.error,
      },
    };
  }

  const expectNoSecret = (text: string) => {
    for (const secret of secrets) expect(text).not.toContain(secret);
  };

  it('the mock really quotes the headers and the prompt in its error messages', async () => {
    const response = await fetch(`${mock.url}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${apiKey}`,
        ...behaving({ failure: 'status', failureStatus: 401, failureQuotes: 'headers' }),
      },
      body: JSON.stringify({ model: 'm', messages: ask(prompt) }),
    });
    expect(response.status).toBe(401);
    expect(await response.text()).toContain(apiKey);
  });

  it('401 and 403: the client learns the status only', async () => {
    for (const [name, status, text] of [
      ['unauthorized', 401, 'Unauthorized'],
      ['forbidden', 403, 'Forbidden'],
    ] as const) {
      const answers = await everyAnswer(name);
      const message = `The upstream answered ${status} ${text}.`;
      // Refused before any upstream took the request on: a stream gets the status too.
      for (const answer of [answers.chat, answers.chatStream]) {
        expect(answer.status).toBe(502);
        expect(JSON.parse(answer.body).error).toMatchObject({ type: 'upstream_error', message });
      }
      for (const answer of [answers.messages, answers.messagesStream]) {
        expect(answer.status).toBe(502);
        expect(JSON.parse(answer.body).error).toMatchObject({ message });
      }
      for (const text of answers.texts) expectNoSecret(text);
    }
  });

  it("400: the client's own error keeps the upstream's message, with the key and header values redacted", async () => {
    const answers = await everyAnswer('bad-request');
    expect(answers.chat.status).toBe(400);
    const error = JSON.parse(answers.chat.body).error;
    expect(error).toMatchObject({
      type: 'invalid_request_error',
      message: expect.stringMatching(
        /^The upstream answered 400: The mock upstream was told to fail\. Request headers: /,
      ),
    });
    expect(error.message).toContain('Bearer [redacted]');
    expect(error.message).toContain('"x-secret-token":"[redacted]"');
    expect(answers.messages.status).toBe(400);
    expect(JSON.parse(answers.messages.body).error).toMatchObject({
      type: 'invalid_request_error',
      message: expect.stringContaining('[redacted]'),
    });
    expect(answers.chatStream.status).toBe(400);
    expect(JSON.parse(answers.chatStream.body).error).toMatchObject({
      message: expect.stringContaining('Request headers'),
    });
    expect(answers.messagesStream.status).toBe(400);
    for (const text of answers.texts) expectNoSecret(text);
  });

  it('the key in every spelling an upstream echoes it in (JSON escapes, base64, lowercase percent-encoding): none reaches the client', async () => {
    const direct = await fetch(`${mock.url}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${slashedKey}`,
        ...behaving({ failure: 'status', failureStatus: 400, failureQuotes: 'encoded-key' }),
      },
      body: JSON.stringify({ model: 'm', messages: ask('x') }),
    });
    // The mock really spells the key each way (its JSON body escapes the message once more).
    const quoted = ((await direct.json()) as { error: { message: string } }).error.message;
    for (const spelling of echoedSpellings) expect(quoted).toContain(spelling);

    const answers = await everyAnswer('encoded-key');
    expect(answers.chat.status).toBe(400);
    const { message } = JSON.parse(answers.chat.body).error;
    expect(message).toContain('Key as JSON: {"key":"[redacted]"}; as \\u escapes: "[redacted]"; base64: [redacted]');
    expect(message).toContain('?key=[redacted]');
    for (const text of answers.texts) expectNoSecret(text);
  });

  it('500 quoting the prompt: the status only', async () => {
    const answers = await everyAnswer('server-error');
    expect(JSON.parse(answers.chat.body).error).toMatchObject({
      message: 'The upstream answered 500 Internal Server Error.',
    });
    expect(answers.messagesStream.status).toBe(502);
    expect(JSON.parse(answers.messagesStream.body).error).toMatchObject({
      message: 'The upstream answered 500 Internal Server Error.',
    });
    for (const text of answers.texts) expectNoSecret(text);
  });

  it('in-band error frames: the message of a client error (redacted), the status of any other', async () => {
    const unauthorized = await everyAnswer('in-band-401');
    expect(unauthorized.inBand.chat).toMatchObject({ message: 'The upstream reported an error (401 Unauthorized).' });
    // A whole (JSON) answer gets the failure as its status instead of a frame.
    expect(JSON.parse(unauthorized.chat.body).error).toMatchObject({
      message: 'The upstream answered 401 Unauthorized.',
    });
    const failed = await everyAnswer('in-band-500');
    expect(failed.inBand.messages).toMatchObject({
      message: 'The upstream reported an error (500 Internal Server Error).',
    });
    const invalid = await everyAnswer('in-band-400');
    expect(invalid.inBand.chat).toMatchObject({
      message: expect.stringMatching(/^The mock upstream failed mid-stream\. Request headers: .*\[redacted\]/),
    });
    for (const answers of [unauthorized, failed, invalid]) {
      for (const text of answers.texts) expectNoSecret(text);
    }
  });

  it('no log line carries the upstream key, a header value or the prompt', async () => {
    // A 500 quoting the prompt that ejects the replica: the warning says why.
    sent += 1;
    const ejecting = await post(`${gateway.url}/v1/chat/completions`, { model: 'ejected', messages: ask(prompt) });
    expect(ejecting.status).toBe(502);
    // The capture sees the engine's warnings: without this line the assertion below proves nothing.
    expect(await eventually(() => lines.some((line) => /replica .* ejected/.test(String(line.msg))))).toBe(true);
    // Every request of this file has its line, each a failure: refused before its stream's head
    // left (`rejected`, its real status) or failed after it.
    expect(await eventually(() => lines.filter((line) => line.context === 'Request').length >= sent)).toBe(true);
    const requests = lines.filter((line) => line.context === 'Request');
    expect(requests.filter((line) => line.outcome === 'failed' || line.outcome === 'rejected')).toHaveLength(sent);
    expect(requests.some((line) => line.outcome === 'rejected' && line.status === 400)).toBe(true);
    expectNoSecret(raw.join('\n'));
  });
});
