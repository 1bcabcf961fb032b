import { isIP } from 'node:net';
import net from 'node:net';

/**
 * Keeps a test process off the network: every TCP connection (node:http, node:https, undici and
 * the global fetch all open theirs through `net.Socket#connect`) to a host other than loopback
 * is refused before any DNS lookup and recorded, so a client library that quietly downloads
 * something (tokenizer files, telemetry) fails the test that made it do so, even when the library
 * swallows the error.
 */
const refused: string[] = [];
const GUARD = Symbol.for('gantry.offline-guard');

type Connect = (this: net.Socket, ...args: unknown[]) => net.Socket;

/** Loopback names and addresses, IPv4, IPv6 and IPv4-mapped IPv6. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1' || bare.startsWith('::ffff:127.');
  return false;
}

/** Where a `connect` call is headed: a host for TCP, undefined for a Unix socket or pipe. */
function destination(args: unknown[]): string | undefined {
  const [first, second] = args;
  const options = (Array.isArray(first) ? first[0] : first) as unknown;
  if (typeof options === 'object' && options !== null) {
    const { host, path } = options as { host?: string; path?: string };
    if (path !== undefined) return undefined;
    return host ?? 'localhost';
  }
  if (typeof options === 'string' && !/^\d+$/.test(options)) return undefined;
  return typeof second === 'string' ? second : 'localhost';
}

function install(): void {
  const prototype = net.Socket.prototype as unknown as Record<symbol | string, unknown>;
  if (prototype[GUARD]) return;
  const original = prototype.connect as Connect;
  prototype.connect = function guardedConnect(this: net.Socket, ...args: unknown[]) {
    const host = destination(args);
    if (host === undefined || isLoopback(host)) return original.apply(this, args);
    refused.push(host);
    const error = Object.assign(
      new Error(`offline guard: connection to ${host} refused (tests must not reach the network)`),
      {
        code: 'ECONNREFUSED',
      },
    );
    process.nextTick(() => this.destroy(error));
    return this;
  };
  prototype[GUARD] = true;
}

install();

/** Hosts a connection was attempted to since the last call, and forgets them. */
export function takeRefusedHosts(): string[] {
  return refused.splice(0, refused.length);
}
