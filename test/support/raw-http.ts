import { connect, type Socket } from 'node:net';

export interface RawExchange {
  /** Everything the server wrote before it closed the connection (or before `waitMs`). */
  text: string;
  status: number;
  headers: Record<string, string>;
  /** The body as JSON when it parses, else undefined. */
  json: unknown;
  closedByServer: boolean;
}

/**
 * Writes raw bytes on a fresh TCP connection and reads one response: until it is whole (by its
 * content-length), the server closes the connection, or `waitMs` passes. For requests no HTTP
 * client would send (bad escapes, two Host headers, half a body); `feed` may write more later.
 */
export function rawExchange(
  port: number,
  request: string | Buffer,
  options: { waitMs?: number; feed?: (socket: Socket) => void } = {},
): Promise<RawExchange> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let closedByServer = false;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(parseResponse(Buffer.concat(chunks).toString('utf8'), closedByServer));
    };
    const timer = setTimeout(finish, options.waitMs ?? 5_000);
    socket.on('connect', () => {
      socket.write(request);
      options.feed?.(socket);
    });
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      if (isWholeResponse(Buffer.concat(chunks))) finish();
    });
    socket.on('end', () => (closedByServer = true));
    socket.on('close', finish);
    socket.on('error', () => undefined);
  });
}

function parseResponse(text: string, closedByServer: boolean): RawExchange {
  const [head, ...rest] = text.split('\r\n\r\n');
  const [statusLine, ...headerLines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = rest.join('\r\n\r\n');
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    json = undefined;
  }
  return { text, status: Number(statusLine.split(' ')[1] ?? 0), headers, json, closedByServer };
}

/** A response whose head and content-length body have arrived (a closing server ends the rest). */
function isWholeResponse(received: Buffer): boolean {
  const headEnd = received.indexOf('\r\n\r\n');
  if (headEnd === -1) return false;
  const head = received.subarray(0, headEnd).toString('latin1');
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (length === null || /\r\nconnection:\s*close/i.test(head)) return false;
  return received.length - headEnd - 4 >= Number(length[1]);
}

/**
 * A request exactly as the OpenAI Python SDK (httpx) writes one without a body: its JSON
 * content-type kept, a `Content-Length: 0` only on POST (httpx adds none to DELETE), `Accept` any type
 * on delete (it expects no JSON back).
 */
export function pythonSdkRequest(method: 'POST' | 'DELETE', path: string, port: number): string {
  const lines = [
    `${method} ${path} HTTP/1.1`,
    `Host: 127.0.0.1:${port}`,
    'Accept-Encoding: gzip, deflate',
    'Connection: keep-alive',
    `Accept: ${method === 'DELETE' ? '*/*' : 'application/json'}`,
    'Content-Type: application/json',
    'User-Agent: OpenAI/Python 2.8.1',
    'X-Stainless-Lang: python',
    'X-Stainless-Package-Version: 2.8.1',
    'X-Stainless-OS: Linux',
    'X-Stainless-Arch: x64',
    'X-Stainless-Runtime: CPython',
    'X-Stainless-Runtime-Version: 3.12.3',
    'Authorization: Bearer unused',
    'X-Stainless-Async: false',
    'x-stainless-retry-count: 0',
    'x-stainless-read-timeout: 600',
    ...(method === 'POST' ? ['Content-Length: 0'] : []),
  ];
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** A JSON POST on a connection of its own, which the test resets (an RST, as a client killed mid-request sends). */
export interface ResettablePost {
  /** Settles with the answer's status once its first line arrives. */
  answered: Promise<number>;
  /** Resets the connection (RST, not FIN) and resolves once it is closed here. */
  reset(): Promise<void>;
}

export function resettablePost(
  port: number,
  path: string,
  headers: Record<string, string>,
  body: unknown,
): ResettablePost {
  const payload = JSON.stringify(body);
  const head = [
    `POST ${path} HTTP/1.1`,
    'host: 127.0.0.1',
    'content-type: application/json',
    `content-length: ${Buffer.byteLength(payload)}`,
  ];
  for (const [name, value] of Object.entries(headers)) head.push(`${name}: ${value}`);
  const socket = connect(port, '127.0.0.1', () => socket.write(`${head.join('\r\n')}\r\n\r\n${payload}`));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const answered = new Promise<number>((resolve) => {
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(received);
      if (status) resolve(Number(status[1]));
    });
  });
  return {
    answered,
    reset: () => {
      if (!socket.destroyed) socket.resetAndDestroy();
      return closed;
    },
  };
}
