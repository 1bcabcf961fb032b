import { GatewayError } from '../errors/gateway-error.js';
import type { ResponseObject, StoredEvent, StoredItem } from './response-store.js';

/** The items of a Response's `output` that carry an id: what `item_reference` may name later. */
export function outputItemsOf(response: ResponseObject): StoredItem[] {
  return response.output.filter(
    (item): item is StoredItem =>
      typeof item === 'object' && item !== null && typeof (item as { id?: unknown }).id === 'string',
  );
}

/**
 * How a batch fits a log whose next sequence is `next`: the count of its first events the log
 * already holds (a batch sent again after a timeout that had run anyway; they are skipped), or
 * why it cannot: its sequences must run on without gaps, and nothing new follows the final event.
 */
export function fitBatch(
  events: readonly StoredEvent[],
  next: number,
  closed: boolean,
): { skip: number } | { problem: string } {
  if (events.length === 0) return { skip: 0 };
  const first = events[0]!.sequence;
  for (let index = 1; index < events.length; index++) {
    if (events[index]!.sequence !== first + index)
      return { problem: `event sequence ${events[index]!.sequence} where ${first + index} was expected` };
  }
  if (first > next) return { problem: `event sequence ${first} where ${next} was expected` };
  const skip = Math.min(next - first, events.length);
  if (closed && skip < events.length) return { problem: 'the event log is closed: its final event was appended' };
  return { skip };
}

/** The first sequence a follower of `after` wants (`after` below -1 reads as -1: from the start). */
export function firstWanted(after: number): number {
  return Math.max(Math.floor(after), -1) + 1;
}

export function noEventLog(id: string): GatewayError {
  return new GatewayError(
    'not_found',
    `Response '${id}' has no stored events (it is unknown, expired, deleted, or was not run in the background).`,
    {
      code: 'response_not_found',
    },
  );
}

export function eventsDropped(after: number, firstKept: number): GatewayError {
  return new GatewayError(
    'invalid_request',
    `The events after sequence number ${after} are no longer kept; the oldest kept is ${firstKept}.`,
    {
      param: 'starting_after',
    },
  );
}

/** The code of a failure to reach the store (not of a refusal it answered). */
export const STORE_UNAVAILABLE = 'response_store_unavailable';

export function storeUnavailable(cause: unknown): GatewayError {
  return new GatewayError('unavailable', 'The response store cannot be reached; retry shortly.', {
    code: STORE_UNAVAILABLE,
    retryAfterSeconds: 1,
    cause,
  });
}
