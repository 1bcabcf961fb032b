import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OtlpSink {
  /** The OTLP/HTTP traces endpoint to configure (`/v1/traces`). */
  url: string;
  /** Export requests received, and their body bytes: proof that tracing was really on. */
  readonly requests: number;
  readonly bytes: number;
  close(): Promise<void>;
}

/**
 * A dummy OTLP/HTTP collector on loopback: it reads each export whole and answers 200 with an
 * empty (JSON) ExportTraceServiceResponse, as a collector would, and keeps nothing but counts.
 */
export async function startOtlpSink(): Promise<OtlpSink> {
  let requests = 0;
  let bytes = 0;
  const server = createServer((request, response) => {
    request.on('data', (piece: Buffer) => (bytes += piece.length));
    request.on('end', () => {
      requests += 1;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    get requests() {
      return requests;
    },
    get bytes() {
      return bytes;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
