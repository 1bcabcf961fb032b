import { GatewayError } from '../errors/gateway-error.js';
import type { StoredResponse } from './response-store.js';

/**
 * The bytes of a Responses request's input as the stored parts it names are put in (the items of
 * its `previous_response_id` chain, each `item_reference`'s item, every time it is named), counted
 * as each part is read: an 18 KiB request naming one large item thousands of times is refused
 * before its input is built, not sent upstream whole.
 */
export class ResolvedInputBudget {
  private used = 0;

  constructor(private readonly limit: number) {}

  /** Bytes still allowed. */
  get remaining(): number {
    return Math.max(this.limit - this.used, 0);
  }

  /** Counts `bytes` more, brought in at `param`; a 400 naming the limit once they pass it. */
  spend(bytes: number, param: string): void {
    this.used += bytes;
    if (this.used <= this.limit) return;
    throw new GatewayError(
      'invalid_request',
      `The input, with the stored items and previous responses it names, is larger than responses.maxResolvedInputBytes (${this.limit} bytes).`,
      { param, code: 'input_too_large' },
    );
  }
}

/** The bytes of a value as JSON, as the stores count and keep it. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

/** What a stored response adds to a conversation that continues it: its input and output items. */
export function conversationBytes(record: StoredResponse): number {
  let bytes = 0;
  for (const item of record.inputItems) bytes += jsonBytes(item);
  for (const item of record.response.output) bytes += jsonBytes(item);
  return bytes;
}
