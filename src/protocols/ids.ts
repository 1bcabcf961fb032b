import { randomBytes } from 'node:crypto';

const ID_BYTES = 12;
/** Random bytes are drawn for this many ids at once (one synchronous crypto call, not one per request). */
const IDS_PER_DRAW = 256;
let pool = Buffer.alloc(0);
let offset = 0;

/** A random identifier (96 bits, hex) with the protocol's prefix (`chatcmpl-`, `resp_`, `msg_`). */
export function newId(prefix: string): string {
  if (offset + ID_BYTES > pool.length) {
    pool = randomBytes(ID_BYTES * IDS_PER_DRAW);
    offset = 0;
  }
  offset += ID_BYTES;
  return prefix + pool.toString('hex', offset - ID_BYTES, offset);
}

/** Unix seconds, as `created` fields want them. */
export function unixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
