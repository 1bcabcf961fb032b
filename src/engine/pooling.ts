import type { TokenUsage } from './engine-event.js';

/**
 * The pooling APIs of the engine port: embeddings, rerank and score. Each is one request and one
 * whole answer (no event stream: nothing to keep alive, nothing to continue), so each is a method of
 * its own on InferenceEngine, optional: an engine serves the APIs whose method it has
 * (docs/architecture.md, Pooling APIs).
 */

/** What an engine's pooling call is handed besides its request. */
export interface PoolingContext {
  /** Aborted when the client hangs up or the gateway drains past its deadline: the work stops. */
  signal: AbortSignal;
  /** W3C trace context that an engine calling out over HTTP forwards. */
  traceHeaders?: Record<string, string>;
}

/** An embeddings request: the gateway's model name, and the inputs, texts or token ids. */
export interface EmbeddingRequest {
  model: string;
  input: string[] | number[][];
  /** How the client wants each vector: numbers, or base64 of little-endian float32s. */
  encodingFormat: 'float' | 'base64';
  dimensions?: number;
  user?: string;
  /** Fields the client sent that Gantry does not read, passed on to an upstream as they came. */
  extra: Record<string, unknown>;
}

export interface EmbeddingResult {
  /**
   * One vector per input, in input order: numbers, or already base64 (an upstream asked for
   * `base64` answers so; the protocol converts whichever form the client did not ask for).
   */
  vectors: Array<number[] | string>;
  usage: TokenUsage;
}

/** A rerank (`/v1/rerank`, Jina and Cohere's shape) or score (`/v1/score`) request, as the client sent it. */
export interface PoolingPassRequest {
  model: string;
  /** The body, model aside: an engine that serves it passes it on unread. */
  body: Record<string, unknown>;
}

export interface PoolingPassResult {
  /** The upstream's answer body (the protocol puts the client's model name on it). */
  body: Record<string, unknown>;
  usage: TokenUsage;
}
