import { Observable, Subject, type SchedulerLike, asyncScheduler } from 'rxjs';
import type { DispatchGate } from '../engine/dispatch-gate.js';
import { EngineError } from '../engine/engine-error.js';
import { GatewayError } from '../errors/gateway-error.js';
import { defaultClaim, type AdmissionClaim, type QueueOrder } from './admission-claim.js';
import { FairQueue, type FairEntry } from './fair-queue.js';
import type { AdmissionTicket, ModelAdmission } from './model-admission.js';

export interface AdmissionLimits {
  /** Requests running at once. */
  maxConcurrency: number;
  /** Requests allowed to wait for a slot. */
  maxQueue: number;
  /** How long a request may wait before it fails; none when undefined. */
  queueTimeoutMs?: number;
  /** How waiting requests are ordered (FairQueue): `fair` between tenants (the default), or `fifo`. */
  order?: QueueOrder;
}

/** How one request's wait in the queue ended; a request admitted at once waited 0 ms. */
export interface QueueWait {
  outcome: 'admitted' | 'abandoned' | 'timed_out';
  waitMs: number;
}

interface Waiter extends FairEntry {
  admit: () => void;
}

/**
 * Per-model admission: at most `maxConcurrency` requests run, at most `maxQueue` wait, admitted
 * in the FairQueue's order (fair between tenants, or FIFO). `checkCapacity` refuses a request
 * before its stream opens; `run` waits for a slot, runs the work and frees the slot when the work
 * ends or is unsubscribed (a hang-up leaves the queue at once), settling its tenant's charge.
 */
export class AdmissionQueue implements ModelAdmission {
  private runningCount = 0;
  private readonly line: FairQueue;
  private readonly waitsSubject = new Subject<QueueWait>();
  private gate?: DispatchGate;
  private stopListening?: () => void;

  /**
   * One record per request that reached `run`, when its wait ends: admitted (its queue time),
   * abandoned (the client hung up while queued) or timed out. Nothing in the gateway subscribes:
   * metrics take queue time from each request's telemetry, which ends at admission. It is kept for
   * tests and diagnostics that need every wait, the abandoned and timed-out ones included.
   */
  readonly waits$: Observable<QueueWait> = this.waitsSubject.asObservable();

  constructor(
    private currentLimits: AdmissionLimits,
    private readonly scheduler: SchedulerLike = asyncScheduler,
  ) {
    this.line = new FairQueue(currentLimits.order);
  }

  get limits(): AdmissionLimits {
    return this.currentLimits;
  }

  /**
   * New limits (a reloaded configuration): requests already running keep their slots, waiting
   * ones are admitted at once if the new concurrency has room, and the new queue timeout applies
   * to requests that start waiting from now on.
   */
  setLimits(limits: AdmissionLimits): void {
    this.currentLimits = limits;
    this.line.setOrder(limits.order ?? 'fair');
    this.admitNext();
  }

  /**
   * The engine's word on room (docs/engines.md#saturation): while it says none, requests wait in
   * line even with free slots, and each reading that may show room releases the next in line,
   * one at a time, for as long as the gate still says so. Undefined: slots alone decide.
   */
  setGate(gate: DispatchGate | undefined): void {
    if (gate === this.gate) return;
    this.stopListening?.();
    this.gate = gate;
    this.stopListening = gate?.onRoom(() => this.admitNext());
    this.admitNext();
  }

  /** Requests may be held for the engine's room: they are placed and charged as in a contended queue. */
  get gated(): boolean {
    return this.gate !== undefined;
  }

  get running(): number {
    return this.runningCount;
  }

  get queued(): number {
    return this.line.size;
  }

  /** Throws `overloaded` when a new request would find neither a slot nor room in the queue. */
  checkCapacity(model: string): void {
    if (this.runningCount < this.currentLimits.maxConcurrency) return;
    if (this.line.size < this.currentLimits.maxQueue) return;
    throw new GatewayError('overloaded', `Model '${model}' is at capacity and its queue is full; retry shortly.`, {
      code: 'queue_full',
      retryAfterSeconds: 1,
    });
  }

  /**
   * A request's place in this process: capacity is checked now, and the slot or queue place taken
   * when the ticket runs (the stream's subscription), so an unused ticket holds nothing.
   */
  reserve(model: string, claim: AdmissionClaim = defaultClaim()): AdmissionTicket {
    this.checkCapacity(model);
    return { run: (work$, onAdmitted) => this.run(work$, onAdmitted, claim), release: () => undefined };
  }

  /**
   * Runs `work$` once a slot is free; the slot is held until it completes, fails or is
   * unsubscribed. `onAdmitted` is called when the slot is taken (queue time ends). `claim` places
   * it in line and is charged; its `served` tokens settle the charge when the slot is given back.
   */
  run<T>(work$: Observable<T>, onAdmitted?: () => void, claim: AdmissionClaim = defaultClaim()): Observable<T> {
    return new Observable<T>((subscriber) => {
      let admitted = false;
      let inner: { unsubscribe(): void } | undefined;
      let timeout: { unsubscribe(): void } | undefined;
      const enqueuedAt = this.scheduler.now();
      const report = (outcome: QueueWait['outcome']) =>
        this.waitsSubject.next({ outcome, waitMs: this.scheduler.now() - enqueuedAt });

      const waiter: Waiter = {
        claim,
        admit: () => {
          timeout?.unsubscribe();
          admitted = true;
          this.runningCount += 1;
          report('admitted');
          onAdmitted?.();
          inner = work$.subscribe(subscriber);
        },
      };

      const bounded = Number.isFinite(this.currentLimits.maxConcurrency) || this.gate !== undefined;
      if (this.runningCount < this.currentLimits.maxConcurrency && this.line.size === 0 && this.hasRoom()) {
        // A model that never queues has no service to share: nothing to charge.
        if (bounded) this.line.admitNow(waiter);
        waiter.admit();
      } else {
        this.line.enqueue(waiter);
        if (this.currentLimits.queueTimeoutMs !== undefined) {
          const waitedMs = this.currentLimits.queueTimeoutMs;
          timeout = this.scheduler.schedule(() => {
            this.line.leave(waiter);
            report('timed_out');
            subscriber.error(
              new EngineError('overloaded', `Waited ${waitedMs} ms in the queue without a free slot.`, {
                code: 'queue_timeout',
              }),
            );
          }, waitedMs);
        }
      }

      return () => {
        timeout?.unsubscribe();
        if (!admitted) {
          if (this.line.leave(waiter)) report('abandoned');
          return;
        }
        inner?.unsubscribe();
        this.runningCount -= 1;
        this.line.settle(waiter);
        this.admitNext();
      };
    });
  }

  private admitNext(): void {
    while (this.runningCount < this.currentLimits.maxConcurrency && this.line.size > 0 && this.hasRoom()) {
      const next = this.line.dequeue() as Waiter | undefined;
      if (next === undefined) return;
      next.admit();
    }
  }

  /** Admitting one more now would find room in the engine (always, without a gate). */
  private hasRoom(): boolean {
    return this.gate?.hasRoom() ?? true;
  }
}
