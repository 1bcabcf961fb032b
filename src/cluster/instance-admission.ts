import { Observable, type Subscription } from 'rxjs';
import { defaultClaim, type AdmissionClaim } from '../admission/admission-claim.js';
import { AdmissionQueue, type AdmissionLimits } from '../admission/admission-queue.js';

/** What the primary tells the worker that holds a ticket. */
export interface TicketHolder {
  /** The ticket holds a slot now: its request may run. */
  admitted(): void;
  /** The ticket waited `queueTimeoutMs` without a slot and left the queue. */
  timedOut(message: string): void;
}

/**
 * The instance's admission, held by the primary: one AdmissionQueue per model for every worker,
 * so `maxConcurrency` and `maxQueue` hold for the instance and the queue order (fair between
 * tenants, or FIFO) is decided here, across workers. A ticket (worker id, ticket id) takes its
 * slot or queue place when reserved and gives it back when released, or when its worker dies.
 */
export class InstanceAdmission {
  private readonly queues = new Map<string, AdmissionQueue>();
  private readonly tickets = new Map<string, { worker: number; claim: AdmissionClaim; subscription: Subscription }>();

  /** @param configuredLimits the limits the primary's own configuration gives a model, if it has it. */
  constructor(private configuredLimits: (model: string) => AdmissionLimits | undefined) {}

  /** Requests holding a slot and waiting for one, over the whole instance. */
  get totals(): { running: number; queued: number } {
    let running = 0;
    let queued = 0;
    for (const queue of this.queues.values()) {
      running += queue.running;
      queued += queue.queued;
    }
    return { running, queued };
  }

  /** The queue of a model, if it has one. */
  queueOf(model: string): AdmissionQueue | undefined {
    return this.queues.get(model);
  }

  /**
   * Takes a slot or a queue place for a worker's ticket, or throws `overloaded` (`queue_full`).
   * `holder` hears when the ticket is admitted (maybe before this returns) or times out.
   * `workerLimits` serve a model the primary's configuration does not have (yet, or any more).
   * `claim`: the request's tenant class and charge (the worker's, as it identified the caller).
   */
  reserve(
    worker: number,
    ticket: number,
    model: string,
    workerLimits: AdmissionLimits,
    holder: TicketHolder,
    claim: AdmissionClaim = defaultClaim(),
  ): void {
    const queue = this.queueFor(model, workerLimits);
    queue.checkCapacity(model);
    const key = ticketKey(worker, ticket);
    const place = new Observable<never>(() => {
      holder.admitted();
    });
    const entry = { worker, claim, subscription: undefined as unknown as Subscription };
    this.tickets.set(key, entry);
    entry.subscription = queue.run(place, undefined, claim).subscribe({
      error: (error: Error) => {
        this.tickets.delete(key);
        holder.timedOut(error.message);
      },
    });
  }

  /**
   * Gives a ticket's place back: it leaves the queue, or frees its slot for the next in line,
   * its tenant charged the tokens it `served` (as the engine reported them; none: the estimate).
   */
  release(worker: number, ticket: number, served?: AdmissionClaim['served']): void {
    const key = ticketKey(worker, ticket);
    const entry = this.tickets.get(key);
    if (!entry) return;
    this.tickets.delete(key);
    if (served !== undefined) entry.claim.served = served;
    entry.subscription.unsubscribe();
  }

  /** Gives back every place a worker held (it died): its slots go to the next in line at once. */
  releaseWorker(worker: number): number {
    let released = 0;
    for (const [key, entry] of this.tickets) {
      if (entry.worker !== worker) continue;
      this.tickets.delete(key);
      entry.subscription.unsubscribe();
      released += 1;
    }
    return released;
  }

  /** A reloaded configuration: each known model's queue takes its new limits. */
  reconfigure(configuredLimits: (model: string) => AdmissionLimits | undefined): void {
    this.configuredLimits = configuredLimits;
    for (const [model, queue] of this.queues) {
      const limits = configuredLimits(model);
      if (limits) queue.setLimits(limits);
    }
  }

  private queueFor(model: string, workerLimits: AdmissionLimits): AdmissionQueue {
    let queue = this.queues.get(model);
    if (!queue) {
      queue = new AdmissionQueue(this.configuredLimits(model) ?? workerLimits);
      this.queues.set(model, queue);
    }
    return queue;
  }
}

function ticketKey(worker: number, ticket: number): string {
  return `${worker}:${ticket}`;
}
