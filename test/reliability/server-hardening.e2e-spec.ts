import { connect, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { hasProtocolErrorShape } from '../support/protocol-errors.js';
import { rawExchange, type RawExchange } from '../support/raw-http.js';

const BODY_TIMEOUT_MS = 400;
let gateway: RunningGateway;
let port: number;

beforeAll(async () => {
  gateway = await startGateway({
    server: { bodyTimeoutMs: BODY_TIMEOUT_MS, headersTimeoutMs: 500, maxConnectionsPerAddress: 40 },
    models: [{ name: 'stub', engine: 'stub' }],
  });
  port = Number(new URL(gateway.url).port);
});

afterAll(async () => {
  await gateway?.close();
});

const connections = () =>
  new Promise<number>((resolve, reject) =>
    (gateway.app.getHttpServer() as Server).getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );

/** Polls the server's open connections until `condition` holds (at most 5 s). */
async function connectionsReach(condition: (open: number) => boolean): Promise<boolean> {
  for (let tries = 0; tries < 500; tries += 1) {
    if (condition(await connections())) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return false;
}

const CHAT_BODY = JSON.stringify({ model: 'stub', messages: [{ role: 'user', content: 'hello there' }] });
const MESSAGES_BODY = JSON.stringify({
  model: 'stub',
  max_tokens: 16,
  messages: [{ role: 'user', content: 'hello there' }],
});

function post(
  path: string,
  body: string,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): string {
  const lines = [
    `POST ${path} HTTP/1.1`,
    'host: gantry',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return `${lines.join('\r\n')}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** The exchange ended with `status`, a body in the protocol shape of `dialectPath`, and a closed connection. */
function expectRefusal(exchange: RawExchange, status: number, dialectPath: string, closes = true) {
  expect(exchange.status, exchange.text).toBe(status);
  expect(hasProtocolErrorShape(dialectPath, exchange.json), exchange.text).toBe(true);
  if (closes) expect(exchange.closedByServer, exchange.text).toBe(true);
}

describe('request bodies that never finish (server.bodyTimeoutMs)', () => {
  it('answers 408 in the protocol shape and closes, for silence and for a trickle alike', async () => {
    const silent = await rawExchange(port, post('/v1/chat/completions', CHAT_BODY).slice(0, -10));
    expectRefusal(silent, 408, '/v1/chat/completions');
    expect(silent.json).toMatchObject({ error: { code: 'body_timeout' } });

    // A byte every 50 ms keeps the socket busy but the body never completes in time.
    let timer: NodeJS.Timeout | undefined;
    const trickled = await rawExchange(port, post('/v1/messages', MESSAGES_BODY).slice(0, -20), {
      feed: (socket) => {
        timer = setInterval(() => socket.writable && socket.write(' '), 50);
      },
    });
    clearInterval(timer);
    expectRefusal(trickled, 408, '/v1/messages');
  });

  it('serves a body that arrives in pieces within the limit', async () => {
    const request = post('/v1/chat/completions', CHAT_BODY);
    const exchange = await rawExchange(port, request.slice(0, -10), {
      waitMs: 3_000,
      feed: (socket) => setTimeout(() => socket.write(request.slice(-10)), BODY_TIMEOUT_MS / 4),
    });
    expect(exchange.status, exchange.text).toBe(200);
  });

  it('frees every connection held by a crowd of unfinished bodies, and serves valid requests meanwhile', async () => {
    const held = Array.from({ length: 30 }, () =>
      rawExchange(port, post('/v1/chat/completions', CHAT_BODY).slice(0, -5)),
    );
    expect(await connectionsReach((open) => open >= 30)).toBe(true);
    const meanwhile = await rawExchange(
      port,
      post('/v1/chat/completions', CHAT_BODY, { 'content-type': 'application/json', connection: 'close' }),
    );
    expect(meanwhile.status).toBe(200);
    const outcomes = await Promise.all(held);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(Array(30).fill(408));
    expect(await connectionsReach((open) => open === 0)).toBe(true);
  });
});

describe('a refused client that keeps its side of the connection open', () => {
  it('is cut off shortly after its 408: it can neither hold the descriptor nor get more requests served', async () => {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => (received += text));
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(post('/v1/chat/completions', CHAT_BODY).slice(0, -5));
    const ended = new Promise<void>((resolve) => socket.once('end', () => resolve()));
    await ended;
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    // The client never ends its side and keeps sending a pipelined request: the server destroys
    // its socket anyway (the descriptor is freed), and serves nothing more on it.
    socket.write(`hello\r\n\r\n${post('/v1/chat/completions', CHAT_BODY)}`);
    expect(await connectionsReach((open) => open === 0)).toBe(true);
    expect(received.match(/HTTP\/1\.1 /g)).toHaveLength(1);
    socket.destroy();
  });
});

describe('headers that never finish (server.headersTimeoutMs)', () => {
  it('answers 408 in the protocol shape and closes', async () => {
    const exchange = await rawExchange(
      port,
      'POST /v1/chat/completions HTTP/1.1\r\nhost: gantry\r\ncontent-type: appl',
    );
    expectRefusal(exchange, 408, '/v1/chat/completions');
  });
});

describe('connections per client address (server.maxConnectionsPerAddress)', () => {
  it('refuses connections beyond the limit with 429 in the OpenAI shape, and takes new ones once some close', async () => {
    const idle = Array.from({ length: 40 }, () => rawExchange(port, '', { waitMs: 1_500 }));
    expect(await connectionsReach((open) => open >= 40)).toBe(true);
    const refused = await rawExchange(port, post('/v1/chat/completions', CHAT_BODY));
    expectRefusal(refused, 429, '/v1/chat/completions');
    expect(refused.json).toMatchObject({ error: { code: 'too_many_connections' } });
    await Promise.all(idle);
    expect(await connectionsReach((open) => open === 0)).toBe(true);
    expect((await rawExchange(port, post('/v1/chat/completions', CHAT_BODY), { waitMs: 2_000 })).status).toBe(200);
  });
});

describe('what Node or Fastify would answer in their own shape', () => {
  it('a malformed % escape: 400 in the shape of the path it names', async () => {
    expectRefusal(await rawExchange(port, post('/v1/chat/completions%zz', CHAT_BODY)), 400, '/v1/chat/completions');
    expectRefusal(await rawExchange(port, post('/v1/messages%zz', MESSAGES_BODY)), 400, '/v1/messages');
  });

  it('a request Node cannot parse: 400 in the shape of its request line, closed', async () => {
    expectRefusal(
      await rawExchange(port, 'POST /v1/messages HTTP/1.1\r\nhost: gantry\r\nbad header line\r\n\r\n'),
      400,
      '/v1/messages',
    );
    expectRefusal(await rawExchange(port, 'NOT-HTTP at all\r\n\r\n'), 400, '/v1/chat/completions');
  });

  it('headers larger than Node accepts: 431 in the protocol shape', async () => {
    const huge = `POST /v1/messages HTTP/1.1\r\nhost: gantry\r\nx-filler: ${'a'.repeat(20_000)}\r\n\r\n`;
    expectRefusal(await rawExchange(port, huge), 431, '/v1/messages');
  });

  it('an Expect other than 100-continue: 417 in the protocol shape', async () => {
    expectRefusal(
      await rawExchange(
        port,
        post('/v1/messages', MESSAGES_BODY, { 'content-type': 'application/json', expect: 'teapot' }),
      ),
      417,
      '/v1/messages',
    );
  });

  it('CONNECT: answered 405, not a dropped socket', async () => {
    const exchange = await rawExchange(port, 'CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n');
    expectRefusal(exchange, 405, '/v1/chat/completions');
  });

  it('the dialect follows the decoded path: /v1/message%73 is Messages', async () => {
    const exchange = await rawExchange(port, post('/v1/message%73', '{}'), { waitMs: 2_000 });
    expectRefusal(exchange, 400, '/v1/messages', false);
    const unknownRoute = await rawExchange(port, post('/v1/message%73/nothing-here', '{}'), { waitMs: 2_000 });
    expectRefusal(unknownRoute, 404, '/v1/messages', false);
  });
});

describe('bodies and headers Gantry does not serve', () => {
  it('only JSON bodies: form, text and multipart are 415; application/json with a charset and any +json are served', async () => {
    const form = 'model=stub&input=hello+there';
    for (const contentType of ['application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x']) {
      const exchange = await rawExchange(port, post('/v1/responses', form, { 'content-type': contentType }), {
        waitMs: 2_000,
      });
      expectRefusal(exchange, 415, '/v1/responses', false);
    }
    const body = JSON.stringify({ model: 'stub', input: 'hello there' });
    for (const contentType of ['application/json; charset=utf-8', 'application/vnd.gantry+json', 'Application/JSON']) {
      const exchange = await rawExchange(port, post('/v1/responses', body, { 'content-type': contentType }), {
        waitMs: 2_000,
      });
      expect(exchange.status, `${contentType}: ${exchange.text}`).toBe(200);
    }
  });

  it('two Host headers: 400, closed', async () => {
    const exchange = await rawExchange(
      port,
      post('/v1/messages', MESSAGES_BODY, { host: 'other', 'content-type': 'application/json' }),
    );
    expectRefusal(exchange, 400, '/v1/messages');
    expect(exchange.json).toMatchObject({ error: { message: expect.stringMatching(/Host/) } });
  });

  it('a body in a Content-Encoding Gantry does not decode: 415, closed', async () => {
    const exchange = await rawExchange(
      port,
      post('/v1/chat/completions', CHAT_BODY, { 'content-type': 'application/json', 'content-encoding': 'gzip' }),
    );
    expectRefusal(exchange, 415, '/v1/chat/completions');
    const identity = await rawExchange(
      port,
      post('/v1/chat/completions', CHAT_BODY, { 'content-type': 'application/json', 'content-encoding': 'identity' }),
      {
        waitMs: 2_000,
      },
    );
    expect(identity.status).toBe(200);
  });

  it('integers no engine can take (max_tokens 1e308, 2^53 + 1, seed beyond 2^53) are 400s naming the field', async () => {
    const cases: Array<[string, string, string]> = [
      [
        '/v1/chat/completions',
        '{"model":"stub","max_tokens":1e308,"messages":[{"role":"user","content":"hi"}]}',
        'max_tokens',
      ],
      [
        '/v1/chat/completions',
        '{"model":"stub","max_completion_tokens":9007199254740993,"messages":[{"role":"user","content":"hi"}]}',
        'max_completion_tokens',
      ],
      ['/v1/chat/completions', '{"model":"stub","seed":1e20,"messages":[{"role":"user","content":"hi"}]}', 'seed'],
      ['/v1/responses', '{"model":"stub","max_output_tokens":2147483648,"input":"hi"}', 'max_output_tokens'],
      ['/v1/messages', '{"model":"stub","max_tokens":1e308,"messages":[{"role":"user","content":"hi"}]}', 'max_tokens'],
    ];
    for (const [path, body, field] of cases) {
      const exchange = await rawExchange(port, post(path, body), { waitMs: 2_000 });
      expectRefusal(exchange, 400, path, false);
      expect(JSON.stringify(exchange.json), body).toContain(field);
    }
  });
});
