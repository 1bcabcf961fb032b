import type { Observable } from 'rxjs';
import type { EngineEvent } from './engine-event.js';
import type { GenerationRequest } from './generation-request.js';
import type {
  EmbeddingRequest,
  EmbeddingResult,
  PoolingContext,
  PoolingPassRequest,
  PoolingPassResult,
} from './pooling.js';
import type { ReplicaReport } from './replica-report.js';
import { estimatePromptTokens } from './token-estimate.js';

/**
 * The engine port. One instance serves one configured model.
 *
 * `generate` returns a cold observable: subscribing starts the work, unsubscribing cancels it
 * (the HTTP engine aborts its upstream request, the llama engine stops decoding, the stub clears
 * its timers). A client hang-up therefore reaches the engine through plain RxJS teardown.
 * An engine that can refuse a request (a prompt over its context) emits `accepted` as soon as it
 * is past every such check, so that a stream answers a refusal before it with its HTTP status
 * (see AcceptedEvent).
 */
export abstract class InferenceEngine {
  abstract generate(request: GenerationRequest): Observable<EngineEvent>;

  /** Embeddings (`POST /v1/embeddings`); an engine without it does not serve the API (engine/pooling.ts). */
  embed?(request: EmbeddingRequest, context: PoolingContext): Promise<EmbeddingResult>;

  /** Rerank (`POST /v1/rerank`), passed on unread; absent: not served. */
  rerank?(request: PoolingPassRequest, context: PoolingContext): Promise<PoolingPassResult>;

  /** Score (`POST /v1/score`), passed on unread; absent: not served. */
  score?(request: PoolingPassRequest, context: PoolingContext): Promise<PoolingPassResult>;

  /**
   * The prompt's token count as this engine would see it; an estimate unless overridden. Awaited
   * before a Messages stream opens (its `message_start` carries it), so it must be quick: local,
   * or bounded in time with the estimate as its fallback.
   */
  async countPromptTokens(request: GenerationRequest): Promise<number> {
    return estimatePromptTokens(request);
  }

  /** Whether the engine can take requests now (a native model loaded, a healthy replica). */
  isReady(): boolean {
    return true;
  }

  /**
   * Requests the engine can work on at once, used as the admission limit when the model's config
   * sets no `maxConcurrency` (the llama engine: its context sequences). Unlimited by default.
   * With `server.workers` above 1 the primary, which builds no engine, decides admission for the
   * instance and does not read it: a kind that relies on it is `singleProcess`, or its models set
   * `maxConcurrency`.
   */
  get defaultMaxConcurrency(): number {
    return Number.POSITIVE_INFINITY;
  }

  /**
   * The replicas behind the model, for `/metrics` (engine/replica-report.ts); absent: the engine
   * has none to show. Read at each scrape, so it must be quick; read once more after `close()`
   * for the final totals that a reload carries over to the next engine.
   */
  replicaReport?(): ReplicaReport;

  /** Releases what the engine holds (models, sockets); awaited at shutdown. */
  async close(): Promise<void> {}
}
