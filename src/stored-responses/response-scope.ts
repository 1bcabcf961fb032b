import { GatewayError } from '../errors/gateway-error.js';
import type { ResponseObject, StoredItem, StoredResponse } from './response-store.js';

/**
 * Whose stored responses a request sees: each API key has its own (as OpenAI scopes them to a
 * project), so one key can neither read another's responses nor reference or shadow its items.
 * The store is shared; the key's id prefixes every response and item id in it, and is taken off
 * again on the way out. An open gateway (no API keys) has one scope, with ids as they are.
 */
export class ResponseScope {
  static readonly OPEN = new ResponseScope('');

  private constructor(private readonly prefix: string) {}

  /** The scope of the API key with this id (ApiKeyRing's id, never the key itself). */
  static ofKey(keyId: string | undefined): ResponseScope {
    return keyId === undefined ? ResponseScope.OPEN : new ResponseScope(`${keyId}~`);
  }

  /** The id of the API key whose scope a stored id is in ('' for an open gateway's). */
  static ownerOf(storedId: string): string {
    const end = storedId.indexOf('~');
    return end === -1 ? '' : storedId.slice(0, end);
  }

  /** The id of the API key it is the scope of ('' for an open gateway's). */
  get owner(): string {
    return this.prefix.slice(0, -1);
  }

  id(id: string): string {
    return this.prefix + id;
  }

  ids(ids: readonly string[]): string[] {
    return this.prefix === '' ? [...ids] : ids.map((id) => this.prefix + id);
  }

  /** The client's id of a stored id. */
  clientId(stored: string): string {
    return this.prefix !== '' && stored.startsWith(this.prefix) ? stored.slice(this.prefix.length) : stored;
  }

  response(response: ResponseObject): ResponseObject {
    if (this.prefix === '') return response;
    return { ...response, id: this.id(response.id), output: response.output.map((item) => this.scopedItem(item)) };
  }

  items(items: readonly StoredItem[]): StoredItem[] {
    return this.prefix === '' ? [...items] : items.map((item) => ({ ...item, id: this.id(item.id) }));
  }

  /** A stored record as its client sees it. */
  record(record: StoredResponse): StoredResponse {
    if (this.prefix === '') return record;
    return {
      response: this.clientResponse(record.response),
      inputItems: record.inputItems.map((item) => this.clientItem(item)),
      previousResponseId: record.previousResponseId === null ? null : this.clientId(record.previousResponseId),
    };
  }

  clientResponse(response: ResponseObject): ResponseObject {
    if (this.prefix === '') return response;
    return {
      ...response,
      id: this.clientId(response.id),
      output: response.output.map((item) => this.clientItem(item)),
    };
  }

  clientItem<T>(item: T): T {
    const id = (item as { id?: unknown }).id;
    return this.prefix === '' || typeof id !== 'string' ? item : { ...item, id: this.clientId(id) };
  }

  /** An error as its client may see it: no stored id of this scope in its message, only the client's ids. */
  clientError(error: unknown): unknown {
    if (this.prefix === '' || !(error instanceof GatewayError) || !error.message.includes(this.prefix)) return error;
    const { param, code, retryAfterSeconds } = error;
    return new GatewayError(error.kind, error.message.replaceAll(this.prefix, ''), {
      param,
      code,
      retryAfterSeconds,
      cause: error,
    });
  }

  private scopedItem(item: unknown): unknown {
    const id = (item as { id?: unknown }).id;
    return typeof id === 'string' ? { ...(item as object), id: this.id(id) } : item;
  }
}
