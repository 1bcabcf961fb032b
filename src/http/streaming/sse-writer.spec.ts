import { createServer, get, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SseWriter } from './sse-writer.js';

/** The server side's writes to its socket, counted where they reach the stream (one per write, writev included). */
function countWrites(socket: Socket): { count: number } {
  const counted = { count: 0 };
  const stream = socket as unknown as {
    _write: (...args: unknown[]) => unknown;
    _writev?: (...args: unknown[]) => unknown;
  };
  const write = stream._write.bind(socket);
  stream._write = (...args) => ((counted.count += 1), write(...args));
  if (stream._writev) {
    const writev = stream._writev.bind(socket);
    stream._writev = (...args) => ((counted.count += 1), writev(...args));
  }
  return counted;
}

describe('SseWriter', () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  /** Serves one SSE response through `serve`, and reads it whole. */
  async function exchange(
    serve: (response: ServerResponse) => { count: number },
  ): Promise<{ body: string; writes: number }> {
    let counted: { count: number } = { count: 0 };
    server = createServer((_request, response) => {
      counted = serve(response);
    });
    await new Promise<void>((listening) => server!.listen(0, '127.0.0.1', listening));
    const body = await new Promise<string>((resolve, reject) => {
      get({ host: '127.0.0.1', port: (server!.address() as AddressInfo).port, path: '/' }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve(text));
      }).on('error', reject);
    });
    return { body, writes: counted.count };
  }

  it('sends the head in one write with the frames of the opening turn', async () => {
    const { body, writes } = await exchange((response) => {
      const counted = countWrites(response.socket!);
      const writer = new SseWriter(response, 1 << 20);
      writer.open({});
      writer.write({ data: '{"role":"assistant"}' });
      // The end comes in a later turn: the opening turn's write is the head and the first frame.
      setTimeout(() => writer.end(), 20);
      return counted;
    });
    expect(body).toBe('data: {"role":"assistant"}\n\n');
    // The head with the first frame, then the stream's end.
    expect(writes).toBe(2);
  });

  it('sends the head at once when nothing else is written in the opening turn', async () => {
    const { body, writes } = await exchange((response) => {
      const counted = countWrites(response.socket!);
      const writer = new SseWriter(response, 1 << 20);
      writer.open({});
      setTimeout(() => {
        writer.write({ data: 'late' });
        setTimeout(() => writer.end(), 20);
      }, 20);
      return counted;
    });
    expect(body).toBe('data: late\n\n');
    expect(writes).toBe(3);
  });
});
