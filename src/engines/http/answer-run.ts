import { Subscription, type Observer, type OperatorFunction, type Subscriber } from 'rxjs';
import { ACCEPTED, countersAsAck, countersOf, RESUMING, type EngineEvent } from '../../engine/engine-event.js';
import type { GenerationRequest } from '../../engine/generation-request.js';
import type { HeldFailure } from './held-failures.js';
import { cutError, type Continuation, type MidStreamFailover, type ResumeFailure } from './mid-stream-failover.js';
import type { Replica } from './replica-pool.js';
import type { AttemptOptions } from './upstream-completion-request.js';
import { answerTimeoutError, UpstreamError } from './upstream-error.js';

/** One generation as the HTTP engine sends it: the upstream request, and where its attempts may go. */
export interface AnswerPlan {
  /** What the run reads of the request: not the request, whose messages it must not keep. */
  asked: PlannedRequest;
  /** Asked as one JSON answer: it emits nothing before it is complete. */
  whole: boolean;
  route: AttemptOptions['route'];
  /** The upstream request's JSON. */
  body: string;
  /** Measured prefill runs from here, across retries, as the client waits. */
  startedAt: number;
  /** Absent when an answer cut mid-way is not continued (a whole answer, a raw completion, failover off). */
  failover?: MidStreamFailover;
  /** The replica for the next attempt, none of `excluded`; none when every other is down. */
  pick: (excluded: ReadonlySet<Replica>) => Replica | undefined;
}

/** The few fields of a request a run reads to its end: a plan keeps these, never the messages. */
export type PlannedRequest = Pick<GenerationRequest, 'reasoningOutput' | 'traceHeaders' | 'onResume'>;

/** What a run asks of the engine that serves it: the fleet, and the counts and logs kept across runs. */
export interface AnswerRunHost {
  answerTimeoutMs: number;
  /** One request on one replica, feeding `observer` (HttpEngine.attempt). */
  attempt(
    replica: Replica,
    body: string,
    options: AttemptOptions,
    decode: OperatorFunction<string, EngineEvent>,
    observer: Observer<EngineEvent>,
  ): Subscription;
  decoder(whole: boolean, startedAt: number, continuesText: boolean): OperatorFunction<string, EngineEvent>;
  judgeHeld(held: HeldFailure[], served: boolean): void;
  recordFailure(replica: Replica, error: unknown): void;
  /** The error of a request no replica could serve. */
  exhausted(triedCount: number, lastError: UpstreamError | undefined): unknown;
  countResumeFailure(reason: ResumeFailure): void;
  reportResume(
    asked: PlannedRequest,
    from: Replica,
    to: Replica,
    continuation: Continuation,
    error: UpstreamError,
  ): void;
}

/**
 * One generation on the fleet (HttpEngine.generate), from the first attempt to the last event.
 *
 * It moves through two states, in order:
 * - **trying**: nothing went downstream yet. Acks are held, the latest only (each holds running
 *   totals), so an attempt given up never shows its counters; a retryable failure goes to a
 *   replica not tried yet (`tryNext`), and error statuses wait in `heldFailures` until the request
 *   shows whose they are (HeldFailureJudge). Hidden reasoning is not output: its counters go on at
 *   once as an ack, and a cut while the model reasons is retried whole.
 * - **committed**, from the first output or `done`: events pass straight through, never retried,
 *   since a retry would repeat or contradict them. A cut is continued on another replica when
 *   mid-stream failover allows (`resume`), else it ends the answer.
 *
 * Across both, `accepted` is told once, at the first replica that answers 200, and the answer
 * timeout ends everything. Unsubscribing the subscription `start` returns aborts every attempt.
 */
export class AnswerRun {
  private readonly attempts = new Subscription();
  /** Replicas tried before the first output. */
  private readonly tried = new Set<Replica>();
  /** Replicas that failed this answer after output began. */
  private readonly failed = new Set<Replica>();
  private readonly heldFailures: HeldFailure[] = [];
  private readonly emit: (event: EngineEvent) => void;
  private readonly hiddenReasoning: boolean;
  /** The replica of the latest attempt. */
  private current: Replica | undefined;
  private accepted = false;
  /** See the class comment: `trying` until the first output or `done` goes downstream. */
  private state: 'trying' | 'committed' = 'trying';
  private heldAck: EngineEvent | undefined;

  constructor(
    private readonly host: AnswerRunHost,
    private readonly plan: AnswerPlan,
    private readonly subscriber: Subscriber<EngineEvent>,
  ) {
    const { failover } = plan;
    this.emit = failover
      ? (event: EngineEvent) => subscriber.next(failover.pass(event))
      : (event: EngineEvent) => subscriber.next(event);
    this.hiddenReasoning = plan.asked.reasoningOutput === 'hide';
  }

  /** Arms the answer timeout and sends the first attempt; the subscription ends them all. */
  start(): Subscription {
    const capMs = this.host.answerTimeoutMs;
    // Torn down with the attempts: the client's error ends them, as a hang-up would.
    // A plain timer, not a scheduler action: each idle stream holds one (an action adds a bound
    // function and its own object).
    if (capMs > 0) {
      const cap = setTimeout(() => this.subscriber.error(answerTimeoutError(capMs)), capMs);
      this.attempts.add(() => clearTimeout(cap));
    }
    this.tryNext();
    return this.attempts;
  }

  /** Trying: the next replica not tried yet, or the request fails when none is left. */
  private tryNext(lastError?: UpstreamError): void {
    const replica = this.plan.pick(this.tried);
    if (!replica) {
      this.host.judgeHeld(this.heldFailures.splice(0), false);
      this.subscriber.error(this.host.exhausted(this.tried.size, lastError));
      return;
    }
    this.tried.add(replica);
    this.send(replica, this.plan.body);
  }

  private send(replica: Replica, payload: string, from = this.plan.startedAt, continuesText = false): void {
    this.current = replica;
    const { whole, route, asked } = this.plan;
    this.attempts.add(
      this.host.attempt(
        replica,
        payload,
        {
          whole,
          route,
          traceHeaders: asked.traceHeaders ?? {},
          onAccepted: this.onAccepted,
          onFailure: this.onFailure,
        },
        this.host.decoder(whole, from, continuesText),
        this.observer,
      ),
    );
  }

  /** Each event of each attempt. An arrow: attempt() hands it on unbound, as the stream's own `next`. */
  private readonly onEvent = (event: EngineEvent): void => {
    if (this.hiddenReasoning && event.type === 'reasoning') {
      const ack = countersAsAck(event);
      if (ack === undefined) return;
      this.heldAck = undefined;
      return this.emit(ack);
    }
    if (this.state === 'committed') return this.emit(event);
    if (event.type === 'ack') {
      this.heldAck = event;
      return;
    }
    this.state = 'committed';
    // An output piece that carries the counters says all the held ack did, and more.
    if (this.heldAck && countersOf(event) === undefined) this.emit(this.heldAck);
    this.heldAck = undefined;
    this.emit(event);
  };

  private readonly onError = (error: unknown): void => {
    this.heldAck = undefined;
    if (this.state === 'trying' && error instanceof UpstreamError && error.retryable) this.tryNext(error);
    else if (this.state === 'committed' && this.plan.failover) this.resume(this.plan.failover, error);
    else {
      this.host.judgeHeld(this.heldFailures.splice(0), false);
      this.subscriber.error(error);
    }
  };

  private readonly onComplete = (): void => {
    if (this.heldAck) this.emit(this.heldAck);
    this.subscriber.complete();
  };

  private readonly observer: Observer<EngineEvent> = {
    next: this.onEvent,
    error: this.onError,
    complete: this.onComplete,
  };

  /** Committed, and cut: finish the answer, end it, or continue it on another replica. */
  private resume(answer: MidStreamFailover, error: unknown): void {
    const decision = answer.decide(error, performance.now());
    if (decision.kind === 'finish') {
      this.subscriber.next(decision.event);
      this.subscriber.complete();
      return;
    }
    if (decision.kind === 'end') {
      if (decision.failure) this.host.countResumeFailure(decision.failure);
      this.subscriber.error(decision.error);
      return;
    }
    const from = this.current!;
    this.failed.add(from);
    // Never a replica that is down; one that failed this answer only when no other is up.
    const next = this.plan.pick(this.failed) ?? this.plan.pick(new Set());
    if (!next) {
      this.host.countResumeFailure('no_replica');
      this.subscriber.error(cutError(error as UpstreamError, ' No other replica could continue the answer.'));
      return;
    }
    this.host.reportResume(this.plan.asked, from, next, decision, error as UpstreamError);
    // The keep-alive beats again until the continuation's first output.
    this.subscriber.next(RESUMING);
    // Continued only after the answer's text began (see MidStreamFailover): what comes is text.
    this.send(next, JSON.stringify(decision.body), decision.startedAt, true);
  }

  /** A replica answered 200: told once; the ones that refused the prompt before it failed on their own. */
  private readonly onAccepted = (): void => {
    this.host.judgeHeld(this.heldFailures.splice(0), true);
    if (this.accepted) return;
    this.accepted = true;
    this.subscriber.next(ACCEPTED);
  };

  /** Error statuses before any output wait until the request shows whose they are. */
  private readonly onFailure = (replica: Replica, error: unknown): void => {
    if (this.state === 'trying' && error instanceof UpstreamError && error.status !== undefined && error.replicaFault)
      this.heldFailures.push({ replica, error });
    else this.host.recordFailure(replica, error);
  };
}
