import { Observable, Subject, type SchedulerLike, asyncScheduler } from 'rxjs';
import { EngineError } from '../engine/engine-error.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { AdmissionTicket, ModelAdmission } from './model-admission.js';

export interface AdmissionLimits {
  /** Requests running at once. */
  maxConcurrency: number;
  /** Requests allowed to wait for a slot. */
  maxQueue: number;
  /** How long a request may wait before it fails; none when undefined. */
  queueTimeoutMs?: number;
}

/** How one request's wait in the queue ended; a request admitted at once waited 0 ms. */
export interface QueueWait {
  outcome: 'admitted' | 'abandoned' | 'timed_out';
  waitMs: number;
}

interface Waiter {
  admit: () => void;
}

/**
 * Per-model admission: at most `maxConcurrency` requests run, at most `maxQueue` wait, in FIFO
 * order. `checkCapacity` refuses a request before its stream opens; `run` waits for a slot, runs
 * the work and frees the slot when the work ends or is unsubscribed (a hang-up leaves the queue at
 * once).
 */
export class AdmissionQueue implements ModelAdmission {
  private runningCount = 0;
  private readonly waiters: Waiter[] = [];
  private readonly waitsSubject = new Subject<QueueWait>();

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
  ) {}

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
    this.admitNext();
  }

  get running(): number {
    return this.runningCount;
  }

  get queued(): number {
    return this.waiters.length;
  }

  /** Throws `overloaded` when a new request would find neither a slot nor room in the queue. */
  checkCapacity(model: string): void {
    if (this.runningCount < this.currentLimits.maxConcurrency) return;
    if (this.waiters.length < this.currentLimits.maxQueue) return;
    throw new GatewayError('overloaded', `Model '${model}' is at capacity and its queue is full; retry shortly.`, {
      code: 'queue_full',
      retryAfterSeconds: 1,
    });
  }

  /**
   * A request's place in this process: capacity is checked now, and the slot or queue place taken
   * when the ticket runs (the stream's subscription), so an unused ticket holds nothing.
   */
  reserve(model: string): AdmissionTicket {
    this.checkCapacity(model);
    return { run: (work$, onAdmitted) => this.run(work$, onAdmitted), release: () => undefined };
  }

  /**
   * Runs `work$` once a slot is free; the slot is held until it completes, fails or is
   * unsubscribed. `onAdmitted` is called when the slot is taken (queue time ends).
   */
  run<T>(work$: Observable<T>, onAdmitted?: () => void): Observable<T> {
    return new Observable<T>((subscriber) => {
      let admitted = false;
      let inner: { unsubscribe(): void } | undefined;
      let timeout: { unsubscribe(): void } | undefined;
      const enqueuedAt = this.scheduler.now();
      const report = (outcome: QueueWait['outcome']) =>
        this.waitsSubject.next({ outcome, waitMs: this.scheduler.now() - enqueuedAt });

      const waiter: Waiter = {
        admit: () => {
          timeout?.unsubscribe();
          admitted = true;
          this.runningCount += 1;
          report('admitted');
          onAdmitted?.();
          inner = work$.subscribe(subscriber);
        },
      };

      if (this.runningCount < this.currentLimits.maxConcurrency && this.waiters.length === 0) {
        waiter.admit();
      } else {
        this.waiters.push(waiter);
        if (this.currentLimits.queueTimeoutMs !== undefined) {
          const waitedMs = this.currentLimits.queueTimeoutMs;
          timeout = this.scheduler.schedule(() => {
            this.leaveQueue(waiter);
            report('timed_out');
            subscriber.error(new EngineError('overloaded', `Waited ${waitedMs} ms in the queue without a free slot.`, { code: 'queue_timeout' }));
          }, waitedMs);
        }
      }

      return () => {
        timeout?.unsubscribe();
        if (!admitted) {
          if (this.leaveQueue(waiter)) report('abandoned');
          return;
        }
        inner?.unsubscribe();
        this.runningCount -= 1;
        this.admitNext();
      };
    });
  }

  /** Removes a waiter; false when it had already left (admitted or timed out). */
  private leaveQueue(waiter: Waiter): boolean {
    const index = this.waiters.indexOf(waiter);
    if (index === -1) return false;
    this.waiters.splice(index, 1);
    return true;
  }

  private admitNext(): void {
    while (this.runningCount < this.currentLimits.maxConcurrency && this.waiters.length > 0) {
      this.waiters.shift()!.admit();
    }
  }
}
