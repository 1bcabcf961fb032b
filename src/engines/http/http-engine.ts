import { Logger } from '@nestjs/common';
import { Observable, type Observer, type OperatorFunction, type Subscription } from 'rxjs';
import type { HttpModelConfig } from './http-model-config.js';
import { MidStreamFailoverConfig } from './mid-stream-failover-config.js';
import type { EngineEvent } from '../../engine/engine-event.js';
import type { GenerationRequest } from '../../engine/generation-request.js';
import { InferenceEngine } from '../../engine/inference-engine.js';
import type { DispatchGate, GatedEngine } from '../../engine/dispatch-gate.js';
import type { ReadinessDetails } from '../../engine/readiness-details.js';
import type { ReplicaReport } from '../../engine/replica-report.js';
import type * as Pooling from '../../engine/pooling.js';
import { UpstreamPooling } from './upstream-pooling.js';
import { AffinityRouter } from './affinity-router.js';
import { AnswerRun, type AnswerPlan, type AnswerRunHost, type PlannedRequest } from './answer-run.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { answerProgress } from './answer-progress.js';
import { decodeUpstreamJson } from './decode-upstream-json.js';
import { decodeUpstreamSse } from './decode-upstream-sse.js';
import { FailoverCounters, type ResumeCount } from './failover-counters.js';
import { engineFiguresOf, fleetLoadFor, type FleetLoadParts, type ReplicaEngineFigures } from './fleet-load-wiring.js';
import { exhaustedError } from './fleet-messages.js';
import { HeldFailureJudge } from './held-failures.js';
import { HealthChecker } from './health-checker.js';
import { httpReplicaReport } from './http-replica-report.js';
import type { ProbeResult } from './health-probe.js';
import {
  continuationTermsOf,
  MidStreamFailover,
  type Continuation,
  type ResumeFailure,
} from './mid-stream-failover.js';
import { prefixAffinityPosition } from './prefix-affinity-key.js';
import { ReplicaPool, type Replica, type ReplicaState, type ReplicaTraffic } from './replica-pool.js';
import { passwordOf, secretRedactor, type Redact } from './secret-redactor.js';
import { stallWatch } from './stall-watch.js';
import { toUpstreamRequest, type AttemptOptions } from './upstream-completion-request.js';
import { UpstreamConnection } from './upstream-connection.js';
import { UpstreamError, upstreamStallError } from './upstream-error.js';
import { countUpstreamPromptTokens } from './upstream-token-count.js';

/**
 * A model served by a fleet of vLLM-style upstreams (OpenAI Chat Completions over SSE).
 *
 * Each request goes to the healthy replica with the fewest outstanding requests, or with `routing:
 * prefix-affinity` to the replica its prompt's start hashes to (see AffinityRouter). A failure that
 * another replica may not have (refused connection, 5xx, a broken stream) is retried on a replica
 * not tried yet, but only while this engine has emitted nothing: once an event went downstream,
 * a retry would repeat or contradict it. Acks are held back until the first output (or the end),
 * so an upstream that reports usage before any output (vLLM's role chunk under continuous usage)
 * can still be retried, and the client never sees counters of an attempt that was given up; the
 * held one is dropped when the first output brings counters of its own (newer totals).
 * The first replica to answer 200 makes the request accepted (its headers came: vLLM answers a
 * prompt it refuses, too long for the context, with a 4xx before them).
 * Unsubscribing aborts the upstream request (its socket is closed, which vLLM takes as an abort).
 *
 * Upstream error text reaches a client only for errors in its own request, with Gantry's key and
 * configured header values redacted; logs never carry it (see upstreamStatusError).
 *
 * A non-streaming client request is asked of the upstream as one JSON answer (`nonStreaming:
 * json`, the default: the cheapest for both sides) or streamed and collected (`stream`); either
 * way it goes through the same decoder, retries and timeouts.
 */
export class HttpEngine extends InferenceEngine implements ReadinessDetails, GatedEngine {
  private readonly logger = new Logger('HttpEngine');
  private readonly pool: ReplicaPool;
  private readonly affinity?: AffinityRouter;
  private readonly connections = new Map<Replica, UpstreamConnection>();
  private readonly healthChecker?: HealthChecker;
  private readonly headers: Record<string, string>;
  private readonly redact: Redact;
  private readonly failoverPolicy: MidStreamFailoverConfig;
  private readonly failoverCounters = new FailoverCounters();
  private readonly pooling: UpstreamPooling;
  /** The engines' own state, when read (`load-aware`, `saturation`, `engineMetrics`). */
  private readonly fleetLoad?: FleetLoadParts;
  private readonly heldFailures: HeldFailureJudge;
  /** What each AnswerRun asks of this engine. */
  private readonly runHost: AnswerRunHost;
  private badUsageNotedAt = 0;

  constructor(private readonly config: HttpModelConfig) {
    super();
    this.failoverPolicy = config.midStreamFailover ?? new MidStreamFailoverConfig();
    this.pool = new ReplicaPool(config.upstreams, {
      maxFailures: config.maxFailures,
      baseMs: config.ejectionBaseMs,
      maxMs: config.ejectionMaxMs,
    });
    if (config.routing === 'prefix-affinity')
      this.affinity = new AffinityRouter(this.pool.replicas, config.routingLoadFactor);
    this.headers = { ...config.headers, ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}) };
    this.redact = secretRedactor([
      config.apiKey,
      ...Object.values(config.headers ?? {}),
      ...config.upstreams.map(passwordOf),
    ]);
    this.fleetLoad = fleetLoadFor(config, this.pool.replicas, this.headers);
    this.fleetLoad?.scraper.start();
    for (const replica of this.pool.replicas) {
      this.connections.set(
        replica,
        new UpstreamConnection(replica.url, config, {
          healthCheckPath: config.healthCheckPath,
          headers: this.headers,
          redact: this.redact,
          limits: config,
        }),
      );
    }
    this.pooling = new UpstreamPooling(this.pool, this.connections, this.headers, config.upstreamModel ?? config.name, {
      recordFailure: (replica, error) => this.recordFailure(replica, error),
      exhausted: (tried, lastError) => exhaustedError(this.config.name, this.pool.replicas.length, tried, lastError),
    });
    this.heldFailures = new HeldFailureJudge(config.name, this.logger, (replica, error) =>
      this.recordFailure(replica, error),
    );
    this.runHost = {
      answerTimeoutMs: this.config.answerTimeoutMs,
      attempt: (replica, body, options, decode, observer) => this.attempt(replica, body, options, decode, observer),
      decoder: (whole, startedAt, continuesText) => this.decoder(whole, startedAt, continuesText),
      judgeHeld: (held, served) => this.heldFailures.judge(held, served),
      recordFailure: (replica, error) => this.recordFailure(replica, error),
      exhausted: (triedCount, lastError) =>
        exhaustedError(this.config.name, this.pool.replicas.length, triedCount, lastError),
      countResumeFailure: (reason) => this.failoverCounters.countFailure(reason),
      reportResume: (request, from, to, continuation, error) =>
        this.reportResume(request, from, to, continuation, error),
    };
    if (config.healthCheckIntervalMs > 0) {
      const targets = this.pool.replicas.map((replica) => ({ replica, connection: this.connections.get(replica)! }));
      this.healthChecker = new HealthChecker(
        this.pool,
        targets,
        config.healthCheckIntervalMs,
        config.healthCheckTimeoutMs,
        (replica, result) => this.logHealthChange(replica, result),
      );
      this.healthChecker.start();
    }
  }

  generate(request: GenerationRequest): Observable<EngineEvent> {
    // Planned when subscribed (its prefill is measured from there), then let go: the plan keeps the
    // serialized upstream body, not the request's objects (docs/benchmarks.md, "The floors, with profiles").
    let unplanned: GenerationRequest | undefined = request;
    return new Observable<EngineEvent>((subscriber) => {
      if (unplanned === undefined) {
        subscriber.error(new GatewayError('internal', 'This generation was already sent upstream.'));
        return undefined;
      }
      const plan = this.plan(unplanned);
      unplanned = undefined;
      return new AnswerRun(this.runHost, plan, subscriber).start();
    });
  }

  /** The upstream request a generation becomes, and how its attempts are routed. */
  private plan(request: GenerationRequest): AnswerPlan {
    const whole = request.stream === false && this.config.nonStreaming === 'json';
    const { route, body: upstreamRequest } = toUpstreamRequest(request, {
      upstreamModel: this.config.upstreamModel ?? this.config.name,
      continuousUsage: this.config.continuousUsage,
      whole,
      disableReasoningWith: this.config.disableReasoningWith,
    });
    const body = JSON.stringify(upstreamRequest);
    const startedAt = performance.now();
    const routed = this.affinity ?? (this.config.routing === 'load-aware' ? this.fleetLoad?.router : undefined);
    const position = routed ? prefixAffinityPosition(request) : undefined;
    const pick = (excluded: ReadonlySet<Replica>) =>
      routed ? routed.pick(position!, excluded) : this.pool.pick(excluded);
    // A whole JSON answer emits nothing before it is complete: its failures are retried as any before the first output.
    const failover =
      whole || route === 'completions' || !this.failoverPolicy.enabled
        ? undefined
        : new MidStreamFailover(continuationTermsOf(request), body, this.failoverPolicy, startedAt);
    const asked = {
      reasoningOutput: request.reasoningOutput,
      traceHeaders: request.traceHeaders,
      onResume: request.onResume,
    };
    return { asked, whole, route, body, startedAt, failover, pick };
  }

  /** The pooling APIs: one JSON answer each, retried on another replica before it (upstream-pooling.ts). */
  override embed(request: Pooling.EmbeddingRequest, context: Pooling.PoolingContext) {
    return this.pooling.embed(request, context);
  }
  override rerank(request: Pooling.PoolingPassRequest, context: Pooling.PoolingContext) {
    return this.pooling.pass('rerank', request, context);
  }
  override score(request: Pooling.PoolingPassRequest, context: Pooling.PoolingContext) {
    return this.pooling.pass('score', request, context);
  }

  /** At least one replica passes its health check and is not ejected. */
  override isReady(): boolean {
    return this.pool.hasAvailable();
  }

  /** An available replica's own count (its tokenizer endpoints), within 250 ms; else the estimate. */
  override countPromptTokens(request: GenerationRequest): Promise<number> {
    const replica = this.pool.replicas.find((candidate) => candidate.isAvailable(Date.now()));
    return countUpstreamPromptTokens(request, {
      baseUrl: replica?.url,
      upstreamModel: this.config.upstreamModel ?? this.config.name,
      headers: this.headers,
    });
  }

  /** Each replica's state: url, healthy, outstanding requests, consecutive failures, health check. */
  replicaStates(): ReplicaState[] {
    return this.pool.states();
  }

  /** Requests sent to each replica, and under prefix affinity those passed on for the load bound. */
  replicaTraffic(): ReplicaTraffic[] {
    return this.pool.replicas.map((replica) => ({
      url: replica.label,
      requests: replica.requests,
      ...(this.affinity ? { affinityOverrides: replica.affinityOverrides } : {}),
    }));
  }

  /** Answers continued on another replica, by the replica that failed and what cut them. */
  streamResumes(): ResumeCount[] {
    return this.failoverCounters.resumeCounts();
  }

  /** Answers cut mid-way that failover did not continue, by why. */
  resumeFailures(): Array<{ reason: ResumeFailure; count: number }> {
    return this.failoverCounters.failureCounts();
  }

  /** Under `saturation`: the gate the model's admission consults before it releases a request. */
  dispatchGate(): DispatchGate | undefined {
    return this.config.saturation ? this.fleetLoad?.router : undefined;
  }

  /** Each replica's engine figures from its metrics; empty when they are not read. */
  engineFigures(): ReplicaEngineFigures[] {
    return this.fleetLoad ? engineFiguresOf(this.fleetLoad, this.pool.replicas) : [];
  }

  /** What `/metrics` shows of the fleet (engine/replica-report.ts). */
  override replicaReport(): ReplicaReport {
    return httpReplicaReport({
      states: this.replicaStates(),
      traffic: this.replicaTraffic(),
      figures: this.engineFigures(),
      resumes: this.streamResumes(),
      resumeFailures: this.resumeFailures(),
    });
  }

  /** `/ready` shows each replica's state beside the model's readiness. */
  readinessDetails(): Record<string, unknown> {
    return { replicas: this.replicaStates() };
  }

  override async close(): Promise<void> {
    this.healthChecker?.stop();
    this.fleetLoad?.scraper.stop();
    await Promise.allSettled([...this.connections.values()].map((connection) => connection.close()));
  }

  /**
   * One request on one replica: counted as outstanding while subscribed, judged when it ends.
   * The caller's trace context (`traceparent`) goes with it so the upstream continues the trace.
   * It feeds `observer` directly (not through `tap` and `finalize`): every event of every stream
   * crosses this, and each operator layer is a hop per event and a subscriber per stream.
   */
  private attempt(
    replica: Replica,
    body: string,
    { whole, route, traceHeaders, onAccepted, onFailure }: AttemptOptions,
    decode: OperatorFunction<string, EngineEvent>,
    observer: Observer<EngineEvent>,
  ): Subscription {
    replica.outstanding += 1;
    replica.requests += 1;
    this.fleetLoad?.load.countSend(replica);
    const subscription = this.connections
      .get(replica)!
      .postChat(body, { ...traceHeaders, ...this.headers }, whole, onAccepted, route)
      .pipe(decode)
      .subscribe({
        next: observer.next,
        error: (error: unknown) => {
          onFailure(replica, error);
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

  /**
   * Upstream body text to events: one JSON answer, or a stream, watched for stalls when
   * `stallTimeoutMs` is set: by its progress (output, counters that grow), not its bytes.
   */
  private decoder(whole: boolean, startedAt: number, continuesText: boolean): OperatorFunction<string, EngineEvent> {
    const options = { startedAt, redact: this.redact, continuesText, onBadUsage: this.onBadUsage };
    if (whole) return decodeUpstreamJson(undefined, options);
    const stallMs = this.failoverPolicy.stallTimeoutMs;
    if (stallMs === 0) return decodeUpstreamSse(undefined, options);
    return (source) =>
      source.pipe(
        decodeUpstreamSse(undefined, options),
        stallWatch<EngineEvent>(stallMs, () => upstreamStallError(stallMs), answerProgress),
      );
  }

  /** At most one line a minute: every answer of a broken upstream would say it. */
  private readonly onBadUsage = (message: string) => {
    const now = Date.now();
    if (now - this.badUsageNotedAt < 60_000) return;
    this.badUsageNotedAt = now;
    this.logger.warn(`Model '${this.config.name}': ${message}`);
  };

  /** One log line, one count, and the request's own notice (its trace) per resume. */
  private reportResume(
    asked: PlannedRequest,
    from: Replica,
    to: Replica,
    continuation: Continuation,
    error: UpstreamError,
  ): void {
    this.failoverCounters.countResume(from.label, continuation.reason);
    // A replica's fault is told in Gantry's own words; an in-band error's text is the upstream's, so only its reason.
    const what = error.replicaFault ? `${continuation.reason}: ${error.message}` : continuation.reason;
    this.logger.warn(
      `Model '${this.config.name}': replica ${from.label} failed mid-answer (${what}); continuing on ${to.label} after ` +
        `${continuation.producedTokens} output tokens (resume ${continuation.resume} of ${this.failoverPolicy.maxResumes}).`,
    );
    asked.onResume?.({
      reason: continuation.reason,
      resume: continuation.resume,
      producedTokens: continuation.producedTokens,
      from: from.label,
      to: to.label,
    });
  }

  private recordFailure(replica: Replica, error: unknown): void {
    if (!(error instanceof UpstreamError) || !error.replicaFault) return;
    const ejectedForMs = this.pool.recordFailure(replica);
    if (ejectedForMs !== undefined) {
      // A replica's fault is told in Gantry's own words (a status, a transport failure), never the upstream's text.
      this.logger.warn(
        `Model '${this.config.name}': replica ${replica.label} ejected for ${ejectedForMs} ms (${error.message})`,
      );
    }
  }

  private logHealthChange(replica: Replica, { state, detail }: ProbeResult): void {
    const where = `Model '${this.config.name}': replica ${replica.label}`;
    if (state === 'passing') this.logger.log(`${where} passes its health check (${detail}).`);
    else if (state === 'failing') this.logger.warn(`${where} fails its health check (${detail}).`);
    else
      this.logger.log(
        `${where} has no health check route (${detail}): it is served, watched by passive checks only (healthCheckPath sets the route).`,
      );
  }
}
