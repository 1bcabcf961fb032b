import type { StoredEvent, StoredItem } from './response-store.js';

// Keys of one response, always passed in this order as KEYS[1..5]:
//   r: a hash {response, status, input, previous}   s: the set of its item ids   e: its event stream
//   l: its log's state {next, final}        c: its cancel flag
// Items live under `<prefix>i:<item id>` as "<owning response id>\n<item JSON>": the last response
// to write an id owns it, and a delete removes only the items it owns. Every key carries a TTL,
// pushed back on each write, so nothing outlives ttlSeconds after the response's last write.
// Stream entry ids are `0-<sequence + 1>`, so a read after sequence N starts at `0-<N + 2>`.

/** The five keys of a response, in the order the scripts take them. */
export type ResponseKeys = [response: string, itemIds: string, events: string, logState: string, cancelFlag: string];

export function responseKeys(prefix: string, id: string): ResponseKeys {
  return [`${prefix}r:${id}`, `${prefix}s:${id}`, `${prefix}e:${id}`, `${prefix}l:${id}`, `${prefix}c:${id}`];
}

/** The pub/sub channel of a response's notices (see Notice in redis-channels.ts). */
export function responseChannel(prefix: string, id: string): string {
  return `${prefix}n:${id}`;
}

/** The stream entry id of the first event after sequence `next - 1`. */
export function entryIdFrom(next: number): string {
  return `0-${next + 1}`;
}

/** Items as the id / JSON pairs the scripts take; an item without an id is not kept on its own. */
export function itemPairs(items: readonly StoredItem[]): string[] {
  const pairs: string[] = [];
  for (const item of items) if (typeof item.id === 'string') pairs.push(item.id, JSON.stringify(item));
  return pairs;
}

/** An item's stored value ("<owner>\n<JSON>") to the item. */
export function storedItemOf(value: string): StoredItem {
  return JSON.parse(value.slice(value.indexOf('\n') + 1)) as StoredItem;
}

/** A stream entry (fields `e`: the event name, `d`: its data) to the event. */
export function storedEventOf([entryId, fields]: [string, string[]]): StoredEvent {
  let event = '';
  let data = '';
  for (let index = 0; index + 1 < fields.length; index += 2) {
    if (fields[index] === 'e') event = fields[index + 1]!;
    else if (fields[index] === 'd') data = fields[index + 1]!;
  }
  return { sequence: Number(entryId.slice(entryId.indexOf('-') + 1)) - 1, event, data };
}
