import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An HTTP(S) proxy on loopback that refuses every request and records where it was headed. The
 * agents are native programs (Rust, Bun) that the in-process guard cannot see into, but both
 * honour HTTPS_PROXY / HTTP_PROXY with NO_PROXY for loopback: pointed here, any attempt to reach
 * the internet (telemetry, update checks, plugin sync) is refused and shows up in `hosts`.
 */
export interface NetworkSpy {
  url: string;
  /** `host:port` of each CONNECT, or the URL of each plain proxied request, in order. */
  hosts: string[];
  /** The proxy variables to give an agent, loopback exempted. */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startNetworkSpy(): Promise<NetworkSpy> {
  const hosts: string[] = [];
  const server: Server = createServer((request, response) => {
    hosts.push(request.url ?? '');
    response.writeHead(403).end();
  });
  server.on('connect', (request, socket) => {
    hosts.push(request.url ?? '');
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const loopback = '127.0.0.1,localhost,::1';
  return {
    url,
    hosts,
    env: {
      HTTPS_PROXY: url,
      HTTP_PROXY: url,
      ALL_PROXY: url,
      https_proxy: url,
      http_proxy: url,
      all_proxy: url,
      NO_PROXY: loopback,
      no_proxy: loopback,
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
