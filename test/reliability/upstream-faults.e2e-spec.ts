import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLogs } from '../support/log-capture.js';
import type { MockBehaviour } from '../../apps/mock-upstream/mock-behaviour.js';
import { startMockUpstream, type MockUpstream } from '../../apps/mock-upstream/mock-upstream.js';
import { eventually, readJson, startGateway, type RunningGateway } from '../support/gateway.js';
import { postSse } from '../support/sse-client.js';

const ask = (text: string) => [{ role: 'user' as const, content: text }];
const behaving = (behaviour: Partial<MockBehaviour>) => ({ 'x-mock-behaviour': JSON.stringify(behaviour) });
const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** Ports where nothing listens: a mock that was started and closed. */
async function refusingUrl(): Promise<string> {
  const mock = await startMockUpstream();
  await mock.close();
  return mock.url;
}

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

describe('retries before the first visible output, with continuous usage', () => {
  let dropping: MockUpstream;
  let healthy: MockUpstream;
  let gateway: RunningGateway;

  beforeAll(async () => {
    [dropping, healthy] = await Promise.all([startMockUpstream(), startMockUpstream()]);
    // The role chunk, which carries usage under continuous_usage_stats, then the connection drops.
    dropping.setBehaviour({ failure: 'drop', failAfterTokens: 0 });
    const pair = {
      engine: 'http',
      upstreams: [dropping.url, healthy.url],
      healthCheckIntervalMs: 0,
      maxFailures: 1000,
    };
    gateway = await startGateway({
      keepalive: { mode: 'chunks', intervalMs: 10_000 },
      models: [
        { name: 'pair', ...pair },
        { name: 'pair-collected', ...pair, nonStreaming: 'stream' },
      ],
    });
  });

  afterAll(async () => {
    await gateway?.close();
    await Promise.all([dropping?.close(), healthy?.close()]);
  });

  it('the dropping replica sends its role chunk with usage before it drops', async () => {
    const response = await post(`${dropping.url}/chat/completions`, {
      model: 'm',
      messages: ask('a b'),
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: true },
    });
    // Read until the drop: the body errors, but what arrived before stays.
    let text = '';
    const decoder = new TextDecoder();
    try {
      for await (const piece of response.body as unknown as AsyncIterable<Uint8Array>)
        text += decoder.decode(piece, { stream: true });
    } catch {
      // The drop itself.
    }
    expect(text).toContain('"role":"assistant"');
    expect(text).toContain('"usage":{"prompt_tokens":2');
    expect(text).not.toContain('[DONE]');
  });

  it('every one of 10 streams succeeds on the other replica, with its counters only', async () => {
    const droppedBefore = dropping.state.chatRequests;
    for (let round = 0; round < 10; round += 1) {
      const exchange = await postSse(`${gateway.url}/v1/chat/completions`, {
        model: 'pair',
        messages: ask(`round ${round} of ten`),
        stream: true,
        timings_per_token: true,
        stream_options: { include_usage: true, continuous_usage_stats: true },
      });
      const chunks = exchange.json();
      expect(chunks.find((chunk) => chunk.error)).toBeUndefined();
      expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe(`round ${round} of ten`);
      // Counters never run backwards: nothing the dropped attempt counted was sent.
      const completions = chunks.map((chunk) => chunk.usage?.completion_tokens ?? 0);
      expect(completions).toEqual([...completions].sort((a, b) => a - b));
      expect(chunks.at(-1)!.usage).toEqual({ prompt_tokens: 4, completion_tokens: 4, total_tokens: 8 });
      expect(chunks.at(-1)!.timings).toMatchObject({ prompt_n: 4, predicted_n: 4 });
    }
    // Each request tried the dropping replica first (ties take turns, and it was just skipped).
    expect(dropping.state.chatRequests - droppedBefore).toBeGreaterThanOrEqual(5);
  });

  it('non-streaming requests collected from a stream are retried too', async () => {
    for (let round = 0; round < 4; round += 1) {
      const response = await post(`${gateway.url}/v1/chat/completions`, {
        model: 'pair-collected',
        messages: ask(`whole ${round}`),
      });
      expect(response.status).toBe(200);
      expect(await readJson(response)).toMatchObject({
        choices: [{ message: { content: `whole ${round}` } }],
        usage: { prompt_tokens: 2, completion_tokens: 2 },
      });
    }
  });
});

describe('upstreams without GET /health', () => {
  let ollama: MockUpstream;
  let bare: MockUpstream;
  let tagged: MockUpstream;
  let unhealthy: MockUpstream;
  let gateway: RunningGateway;
  const probed = { healthCheckIntervalMs: 50, healthCheckTimeoutMs: 1000 };
  const replicaOf = async (model: string) => (await readJson(await fetch(`${gateway.url}/ready`))).models[model];

  beforeAll(async () => {
    [ollama, bare, tagged, unhealthy] = await Promise.all([
      startMockUpstream({ healthRoute: false }),
      startMockUpstream({ healthRoute: false, modelsRoute: false }),
      startMockUpstream({ healthRoute: false, modelsRoute: false, tagsRoute: true }),
      startMockUpstream({ behaviour: { unhealthy: true } }),
    ]);
    gateway = await startGateway({
      models: [
        { name: 'ollama', engine: 'http', upstreams: [ollama.url], ...probed },
        { name: 'bare', engine: 'http', upstreams: [bare.url], ...probed },
        { name: 'tagged', engine: 'http', upstreams: [tagged.url], healthCheckPath: '/api/tags', ...probed },
        { name: 'unhealthy', engine: 'http', upstreams: [unhealthy.url], ...probed },
      ],
    });
  });

  afterAll(async () => {
    await gateway?.close();
    await Promise.all([ollama, bare, tagged, unhealthy].map((mock) => mock?.close()));
  });

  it('falls back to GET /v1/models when /health answers 404, and serves', async () => {
    expect(await eventually(() => (ollama.state.gets['/v1/models'] ?? 0) >= 2)).toBe(true);
    expect(ollama.state.gets['/health']).toBeGreaterThanOrEqual(1);
    expect((await replicaOf('ollama')).replicas[0]).toMatchObject({ healthy: true, healthCheck: 'passing' });
    const response = await post(`${gateway.url}/v1/chat/completions`, {
      model: 'ollama',
      messages: ask('no health route'),
    });
    expect(response.status).toBe(200);
    expect(await readJson(response)).toMatchObject({ choices: [{ message: { content: 'no health route' } }] });
  });

  it('a replica with no probe route at all is not marked down: unknown, and served', async () => {
    expect(await eventually(() => (bare.state.gets['/v1/models'] ?? 0) >= 2)).toBe(true);
    expect(await replicaOf('bare')).toMatchObject({
      ready: true,
      replicas: [{ healthy: true, healthCheck: 'unknown' }],
    });
    const response = await post(`${gateway.url}/v1/chat/completions`, { model: 'bare', messages: ask('still served') });
    expect(response.status).toBe(200);
  });

  it('probes an explicit healthCheckPath, and only it', async () => {
    expect(await eventually(() => (tagged.state.gets['/api/tags'] ?? 0) >= 2)).toBe(true);
    expect(tagged.state.gets['/health']).toBeUndefined();
    expect(tagged.state.gets['/v1/models']).toBeUndefined();
    expect((await replicaOf('tagged')).replicas[0]).toMatchObject({ healthy: true, healthCheck: 'passing' });
  });

  it('a /health that answers 503 still marks the replica down (no fallback)', async () => {
    expect(await eventually(() => (unhealthy.state.gets['/health'] ?? 0) >= 2)).toBe(true);
    expect(await replicaOf('unhealthy')).toMatchObject({
      ready: false,
      replicas: [{ healthy: false, healthCheck: 'failing' }],
    });
    expect(unhealthy.state.gets['/v1/models']).toBeUndefined();
  });
});

describe('/ready with one dead model and one live', () => {
  let live: MockUpstream;
  let any: RunningGateway;
  let all: RunningGateway;

  beforeAll(async () => {
    live = await startMockUpstream();
    const models = [
      { name: 'live', engine: 'http', upstreams: [live.url], healthCheckIntervalMs: 50 },
      { name: 'dead', engine: 'http', upstreams: [await refusingUrl()], healthCheckIntervalMs: 50 },
    ];
    [any, all] = await Promise.all([
      startGateway({ models }),
      startGateway({ server: { readinessRequires: 'all' }, models }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([any?.close(), all?.close()]);
    await live?.close();
  });

  const readiness = async (gateway: RunningGateway) => {
    expect(await eventually(() => !gateway.registry.resolve('dead').engine.isReady())).toBe(true);
    const response = await fetch(`${gateway.url}/ready`);
    return { status: response.status, body: await readJson(response) };
  };

  it('readinessRequires any (the default): 200, and the body shows the dead model', async () => {
    const { status, body } = await readiness(any);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      status: 'ready',
      models: { live: { ready: true }, dead: { ready: false, replicas: [{ healthy: false }] } },
    });
  });

  it('readinessRequires all: 503', async () => {
    const { status, body } = await readiness(all);
    expect(status).toBe(503);
    expect(body).toMatchObject({ status: 'not_ready', models: { live: { ready: true }, dead: { ready: false } } });
  });
});
