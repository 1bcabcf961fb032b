import { Logger } from '@nestjs/common';
import { Observable, Subscription, type Observer } from 'rxjs';
import type { HttpModelConfig } from '../../config/model-config.js';
import { EngineError } from '../../engine/engine-error.js';
import type { EngineEvent } from '../../engine/engine-event.js';
import type { GenerationRequest } from '../../engine/generation-request.js';
import { InferenceEngine } from '../../engine/inference-engine.js';
import { decodeUpstreamJson } from './decode-upstream-json.js';
import { decodeUpstreamSse } from './decode-upstream-sse.js';
import { HealthChecker } from './health-checker.js';
import { ReplicaPool, type Replica, type ReplicaState } from './replica-pool.js';
import { toUpstreamChatRequest } from './upstream-chat-request.js';
import { UpstreamConnection } from './upstream-connection.js';
import { UpstreamError } from './upstream-error.js';

/**
 * A model served by a fleet of vLLM-style upstreams (OpenAI Chat Completions over SSE).
 *
 * Each request goes to the healthy replica with the fewest outstanding requests. A failure that
 * another replica may not have (refused connection, 5xx, a broken stream) is retried on a replica
 * not tried yet, but only while this engine has emitted nothing: once an event went downstream,
 * a retry would repeat or contradict it. Unsubscribing aborts the upstream request (its socket is
 * closed, which vLLM takes as an abort).
 *
 * A non-streaming client request is asked of the upstream as one JSON answer (`nonStreaming:
 * json`, the default: the cheapest for both sides) or streamed and collected (`stream`); either
 * way it goes through the same decoder, retries and timeouts.
 */
export class HttpEngine extends InferenceEngine {
  private readonly logger = new Logger('HttpEngine');
  private readonly pool: ReplicaPool;
  private readonly connections = new Map<Replica, UpstreamConnection>();
  private readonly healthChecker?: HealthChecker;
  private readonly headers: Record<string, string>;

  constructor(private readonly config: HttpModelConfig) {
    super();
    this.pool = new ReplicaPool(config.upstreams, {
      maxFailures: config.maxFailures,
      baseMs: config.ejectionBaseMs,
      maxMs: config.ejectionMaxMs,
    });
    for (const replica of this.pool.replicas) this.connections.set(replica, new UpstreamConnection(replica.url, config));
    this.headers = { ...config.headers, ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}) };
    if (config.healthCheckIntervalMs > 0) {
      const targets = this.pool.replicas.map((replica) => ({ replica, connection: this.connections.get(replica)! }));
      this.healthChecker = new HealthChecker(this.pool, targets, config.healthCheckIntervalMs, config.healthCheckTimeoutMs, (replica, passed) =>
        passed
          ? this.logger.log(`Model '${config.name}': replica ${replica.label} passes its health check again.`)
          : this.logger.warn(`Model '${config.name}': replica ${replica.label} fails its health check.`),
      );
      this.healthChecker.start();
    }
  }

  generate(request: GenerationRequest): Observable<EngineEvent> {
    return new Observable<EngineEvent>((subscriber) => {
      const whole = request.stream === false && this.config.nonStreaming === 'json';
      const body = JSON.stringify(
        toUpstreamChatRequest(request, {
          upstreamModel: this.config.upstreamModel ?? this.config.name,
          continuousUsage: this.config.continuousUsage,
          whole,
        }),
      );
      const attempts = new Subscription();
      const tried = new Set<Replica>();
      let emitted = false;
      const tryNext = (lastError?: UpstreamError) => {
        const replica = this.pool.pick(tried);
        if (!replica) {
          subscriber.error(this.exhausted(tried.size, lastError));
          return;
        }
        tried.add(replica);
        attempts.add(
          this.attempt(replica, body, whole, request.traceHeaders ?? {}, {
            next: (event) => {
              emitted = true;
              subscriber.next(event);
            },
            error: (error: unknown) =>
              !emitted && error instanceof UpstreamError && error.retryable ? tryNext(error) : subscriber.error(error),
            complete: () => subscriber.complete(),
          }),
        );
      };
      tryNext();
      return attempts;
    });
  }

  /** At least one replica passes its health check and is not ejected. */
  override isReady(): boolean {
    return this.pool.hasAvailable();
  }

  /** Each replica's state: url, healthy, outstanding requests, consecutive failures. */
  replicaStates(): ReplicaState[] {
    return this.pool.states();
  }

  override replicas(): ReplicaState[] {
    return this.pool.states();
  }

  override readinessDetails(): Record<string, unknown> {
    return { replicas: this.replicaStates() };
  }

  override async close(): Promise<void> {
    this.healthChecker?.stop();
    await Promise.allSettled([...this.connections.values()].map((connection) => connection.close()));
  }

  /**
   * One request on one replica: counted as outstanding while subscribed, judged when it ends.
   * The caller's trace context (`traceparent`) goes with it so the upstream continues the trace.
   * It feeds `observer` directly (not through `tap` and `finalize`): every event of every stream
   * crosses this, and each operator layer is a hop per event and a subscriber per stream.
   */
  private attempt(replica: Replica, body: string, whole: boolean, traceHeaders: Record<string, string>, observer: Observer<EngineEvent>): Subscription {
    replica.outstanding += 1;
    const subscription = this.connections
      .get(replica)!
      .postChat(body, { ...traceHeaders, ...this.headers }, whole)
      .pipe(whole ? decodeUpstreamJson() : decodeUpstreamSse())
      .subscribe({
        next: observer.next,
        error: (error: unknown) => {
          this.recordFailure(replica, error);
          observer.error(error);
        },
        complete: () => {
          this.pool.recordSuccess(replica);
          observer.complete();
        },
      });
    subscription.add(() => (replica.outstanding -= 1));
    return subscription;
  }

  private recordFailure(replica: Replica, error: unknown): void {
    if (!(error instanceof UpstreamError) || !error.replicaFault) return;
    const ejectedForMs = this.pool.recordFailure(replica);
    if (ejectedForMs !== undefined) {
      this.logger.warn(`Model '${this.config.name}': replica ${replica.label} ejected for ${ejectedForMs} ms (${error.message})`);
    }
  }

  private exhausted(triedCount: number, lastError: UpstreamError | undefined): EngineError {
    const total = this.pool.replicas.length;
    if (!lastError) {
      return new EngineError(
        'unavailable',
        `All ${total} replica${total === 1 ? '' : 's'} of model '${this.config.name}' are down (failing health checks or ejected after errors).`,
        { code: 'upstream_unavailable' },
      );
    }
    if (total === 1) return lastError;
    return new EngineError(
      'unavailable',
      `All replicas of model '${this.config.name}' failed or are down (${triedCount} of ${total} tried); the last error: ${lastError.message}`,
      { code: 'upstream_unavailable', cause: lastError },
    );
  }
}
