import { Observable, Subject, merge } from 'rxjs';
import type { AdmissionClaim } from '../admission/admission-claim.js';
import { AdmissionQueue, type AdmissionLimits, type QueueWait } from '../admission/admission-queue.js';
import { AdmissionCoordinator, type AdmissionTicket, type ModelAdmission } from '../admission/model-admission.js';
import type { DispatchGate } from '../engine/dispatch-gate.js';
import { EngineError } from '../engine/engine-error.js';
import { GatewayError } from '../errors/gateway-error.js';
import { ChannelClosedError, type IpcChannel } from './ipc-channel.js';
import type { ReserveAnswer } from './worker-protocol.js';

/** A model's requests of this worker that hold a ticket from the primary, and how their waits ended. */
interface TicketTally {
  running: number;
  queued: number;
  readonly waits: Subject<QueueWait>;
}

/**
 * A worker's admission, decided by the primary for the whole instance: each accepted request of
 * a model with a `maxConcurrency` reserves its place there, in the instance's one queue (one round trip, before the stream
 * opens, so a refusal is still a real 429), waits for the primary's word while its stream sends
 * keep-alives, and gives the place back when it ends. A model without a concurrency limit never
 * queues, so there is nothing to share: it is admitted here, at no cost.
 */
export class ClusterAdmission extends AdmissionCoordinator {
  private nextTicket = 0;
  private readonly tickets = new Map<number, RemoteTicket>();

  constructor(private readonly channel: IpcChannel) {
    super();
    channel.on<{ ticket: number }>('admitted', ({ ticket }) => this.tickets.get(ticket)?.admit());
    channel.on<{ ticket: number; message: string }>('timedOut', ({ ticket, message }) =>
      this.tickets.get(ticket)?.timeOut(message),
    );
  }

  admissionFor(_model: string, limits: AdmissionLimits): ModelAdmission {
    return new ClusterModelAdmission(this, limits);
  }

  /** Places held through the primary by this worker (waiting or running). */
  get ticketsHeld(): number {
    return this.tickets.size;
  }

  /** The link to the primary is gone: requests still waiting for a slot fail. */
  close(): void {
    for (const ticket of [...this.tickets.values()]) ticket.fail(new ChannelClosedError());
  }

  /**
   * Asks the primary for a place; resolves once it answered (admitted or queued), or rejects with
   * its refusal. The claim goes with it (the primary's queue orders by it), and its `served`
   * tokens with the release (they settle the tenant's charge there).
   */
  async reserve(
    model: string,
    limits: AdmissionLimits,
    tally: TicketTally,
    claim?: AdmissionClaim,
  ): Promise<AdmissionTicket> {
    const id = (this.nextTicket += 1);
    const ticket = new RemoteTicket(tally, () => {
      this.tickets.delete(id);
      this.channel.notify('release', { ticket: id, served: claim?.served });
    });
    this.tickets.set(id, ticket);
    let answer: ReserveAnswer;
    try {
      answer = await this.channel.call<ReserveAnswer>('reserve', { ticket: id, model, limits, claim });
    } catch (error) {
      this.tickets.delete(id);
      throw error;
    }
    if (answer.admitted) ticket.admit();
    ticket.reserved();
    return ticket;
  }
}

/** A model's admission in a worker: through the primary when the model has a concurrency limit. */
class ClusterModelAdmission implements ModelAdmission {
  private readonly local: AdmissionQueue;
  private current: AdmissionLimits;
  private readonly tally: TicketTally = { running: 0, queued: 0, waits: new Subject<QueueWait>() };
  readonly waits$: Observable<QueueWait>;

  constructor(
    private readonly coordinator: ClusterAdmission,
    limits: AdmissionLimits,
  ) {
    this.current = limits;
    this.local = new AdmissionQueue(limits);
    this.waits$ = merge(this.local.waits$, this.tally.waits);
  }

  get limits(): AdmissionLimits {
    return this.current;
  }

  get running(): number {
    return this.local.running + this.tally.running;
  }

  get queued(): number {
    return this.local.queued + this.tally.queued;
  }

  setLimits(limits: AdmissionLimits): void {
    this.current = limits;
    this.local.setLimits(limits);
  }

  /** The engine's room is this worker's to judge: held requests wait in the worker's own queue. */
  setGate(gate: DispatchGate | undefined): void {
    this.local.setGate(gate);
  }

  get gated(): boolean {
    return this.local.gated;
  }

  reserve(model: string, claim?: AdmissionClaim): AdmissionTicket | Promise<AdmissionTicket> {
    if (!Number.isFinite(this.current.maxConcurrency)) return this.local.reserve(model, claim);
    const remote = this.coordinator.reserve(model, this.current, this.tally, claim);
    if (!this.local.gated) return remote;
    // The instance's slot first, then the engine's room (docs/engines.md#saturation): a slot is held while room is awaited.
    const local = this.local;
    return remote.then((ticket): AdmissionTicket => ({
      run: <T>(work$: Observable<T>, onAdmitted?: () => void) => ticket.run(local.run(work$, onAdmitted, claim)),
      release: () => ticket.release(),
    }));
  }
}

/**
 * One place the primary gave this worker. The primary's word that it holds a slot may come
 * before the reservation's answer (a free slot) or long after (it queued); a queue timeout or a
 * lost primary fail it. Giving it back (the request ended, hung up or was abandoned) tells the
 * primary once.
 */
class RemoteTicket implements AdmissionTicket {
  private admitted = false;
  private counted: 'none' | 'queued' | 'running' = 'none';
  private failure?: Error;
  private released = false;
  private waiter?: { admit(): void; fail(error: Error): void };
  private readonly reservedAt = performance.now();

  constructor(
    private readonly tally: TicketTally,
    private readonly giveBack: () => void,
  ) {}

  /** The primary answered the reservation: counted as running or queued from now on. */
  reserved(): void {
    if (this.released || this.failure) return;
    this.count(this.admitted ? 'running' : 'queued');
    if (this.admitted) this.reportWait('admitted');
  }

  admit(): void {
    if (this.admitted || this.released) return;
    this.admitted = true;
    if (this.counted === 'none') return;
    this.count('running');
    this.reportWait('admitted');
    this.waiter?.admit();
  }

  timeOut(message: string): void {
    if (this.counted === 'queued') this.reportWait('timed_out');
    this.fail(new EngineError('overloaded', message, { code: 'queue_timeout' }));
  }

  fail(error: Error): void {
    if (this.failure || this.released) return;
    this.failure = error;
    this.release();
    this.waiter?.fail(error);
  }

  run<T>(work$: Observable<T>, onAdmitted?: () => void): Observable<T> {
    return new Observable<T>((subscriber) => {
      if (this.failure) {
        subscriber.error(this.failure);
        return;
      }
      if (this.released) {
        subscriber.error(new GatewayError('internal', 'This admission place was already given back.'));
        return;
      }
      let inner: { unsubscribe(): void } | undefined;
      const start = () => {
        onAdmitted?.();
        inner = work$.subscribe(subscriber);
      };
      if (this.admitted) start();
      else this.waiter = { admit: start, fail: (error) => subscriber.error(error) };
      return () => {
        this.waiter = undefined;
        inner?.unsubscribe();
        this.release();
      };
    });
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    if (this.counted === 'queued' && !this.failure) this.reportWait('abandoned');
    this.count('none');
    this.giveBack();
  }

  private count(state: 'none' | 'queued' | 'running'): void {
    if (this.counted !== 'none') this.tally[this.counted] -= 1;
    this.counted = state;
    if (state !== 'none') this.tally[state] += 1;
  }

  private reportWait(outcome: QueueWait['outcome']): void {
    this.tally.waits.next({ outcome, waitMs: performance.now() - this.reservedAt });
  }
}
