import type { ClientEvent } from './client-event.js';

/** The three public APIs Gantry speaks; the client can talk to a model through any of them. */
export type ApiName = 'chat' | 'responses' | 'messages';

export const API_NAMES: readonly ApiName[] = ['chat', 'responses', 'messages'];

/** One turn of the conversation as the user and the model wrote it (text only). */
export interface ConversationMessage {
  role: 'user' | 'assistant';
  content: string;
}

/** Everything one request needs, whatever the API. */
export interface TurnInput {
  model: string;
  system?: string;
  maxTokens?: number;
  messages: readonly ConversationMessage[];
}

/** An HTTP request ready for `fetch`, relative to the gateway's base URL. */
export interface ApiRequest {
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** One SSE event as it came off the wire (comments are handled before a decoder sees anything). */
export interface SseMessage {
  event?: string;
  data: string;
}

/**
 * Maps one streamed answer's SSE events to client events. Stateful: create one per answer.
 * A decoder never throws on odd input; what it does not know it ignores.
 */
export type SseDecoder = (message: SseMessage) => ClientEvent[];

/** One API's wire format, seen from the client: how to ask, and how to read the answer. */
export interface GatewayApi {
  readonly name: ApiName;
  buildRequest(input: TurnInput): ApiRequest;
  createDecoder(): SseDecoder;
}
