import { createServer, request as forward, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback HTTP proxy in front of the gateway that keeps each response body as the client
 * received it, for clients whose own fetch cannot be wrapped (Continue's adapters bring their
 * own): a test sees what reached the client, not only what the client made of it.
 */
export interface RecordingProxy {
  url: string;
  /** Each response body, in the order the responses ended. */
  bodies: string[];
  close(): Promise<void>;
}

export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const bodies: string[] = [];
  const server: Server = createServer((incoming, outgoing) => {
    const upstream = forward(
      new URL(incoming.url ?? '/', target),
      { method: incoming.method, headers: incoming.headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        let body = '';
        answer.setEncoding('utf8');
        answer.on('data', (chunk: string) => {
          body += chunk;
          outgoing.write(chunk);
        });
        answer.on('end', () => {
          bodies.push(body);
          outgoing.end();
        });
      },
    );
    upstream.on('error', () => outgoing.destroy());
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
