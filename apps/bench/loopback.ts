import { createServer } from 'node:net';
const LOOPBACK_HOST = /^(?:127(?:\.\d{1,3}){3}|localhost|\[::1\]|::1)$/i;

/** Whether a host name or address is this machine's loopback (127.0.0.0/8, `localhost`, `::1`). */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOST.test(host);
}

/**
 * The URL, parsed, if it targets loopback; throws otherwise. The benchmark opens thousands of
 * connections as fast as it can, which must never be pointed at another machine.
 */
export function loopbackUrl(url: string): URL {
  const parsed = new URL(url);
  if (!isLoopbackHost(parsed.hostname)) {
    throw new Error(
      `refusing a non-loopback target: ${parsed.host} (the benchmark only talks to 127.0.0.1, localhost or ::1)`,
    );
  }
  return parsed;
}

/** A port nothing listens on now (the kernel's pick, released at once). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
