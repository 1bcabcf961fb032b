import { randomBytes } from 'node:crypto';

/** A random identifier with the protocol's prefix (`chatcmpl-`, `resp_`, `msg_`). */
export function newId(prefix: string): string {
  return prefix + randomBytes(12).toString('hex');
}

/** Unix seconds, as `created` fields want them. */
export function unixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
