import type { OperatorFunction } from 'rxjs';
import type { GenerationRequest } from '../engine/generation-request.js';
import type { GenerationResult } from '../streaming/collect-generation.js';
import type { StreamEvent } from '../streaming/stream-event.js';
import type { ErrorDialect } from './errors/render-error.js';
import type { ReasoningCipher } from './openai-responses/reasoning-cipher.js';
import type { SseFrame } from './sse/sse-frame.js';
import type { ModelApi } from '../config/model-apis.js';

/** An API, as telemetry names it (metric labels, log fields, span attributes) and a model's `apis` lists it. */
export type ApiName = ModelApi;

/** What every generation API's request body holds: the model, and whether to stream. */
export interface GenerationBody {
  model: string;
  stream?: boolean;
}

/** The protocol's names for the fields that limits are about, so that a refusal names what the client sent. */
export interface RefusalFieldNames {
  maxTokens: string;
  messages: string;
}

/** What the protocols need of the gateway's configuration, made once at startup. */
export interface ProtocolSettings {
  /** Seals and opens Responses reasoning for clients that keep no state (`responses.encryptionKey`). */
  reasoningCipher: ReasoningCipher;
}

/**
 * One generation API, whole: its names, its error dialect, and the pure functions from its wire
 * format to Gantry's (the decoder) and back (the stream encoder, the non-streaming body mapper).
 * The route, the error rendering and the telemetry all read it, so an API is described once.
 *
 * `Identity` is what one exchange's answer repeats from start to end (its id, model, creation
 * time; for Responses the whole envelope), made once per request.
 */
export interface ProtocolDescriptor<Body extends GenerationBody = GenerationBody, Identity = unknown> {
  /** Its name in telemetry. */
  readonly api: ApiName;
  /** Its route: `POST {path}`; paths below it (`/v1/messages/count_tokens`) speak its dialect too. */
  readonly path: string;
  /** The shape of its errors, before a stream opens and in the status telemetry reports. */
  readonly dialect: ErrorDialect;
  /**
   * Whether its stream's opening frame carries the prompt's token count (Messages'
   * `message_start`): then it is counted before the stream opens, and given to `encode`.
   */
  readonly countsPromptTokens: boolean;
  fieldNames(body: Body): RefusalFieldNames;
  decode(body: Body, settings: ProtocolSettings): GenerationRequest;
  identify(body: Body, settings: ProtocolSettings): Identity;
  /** The non-streaming answer's body, from the collected generation. */
  toBody(result: GenerationResult, identity: Identity): unknown;
  /** The stream encoder: stream events (engine events and heartbeats) to SSE frames. */
  encode(body: Body, identity: Identity, promptTokens: number | undefined): OperatorFunction<StreamEvent, SseFrame>;
}
