import type { Observable } from 'rxjs';
import type { DispatchGate } from '../engine/dispatch-gate.js';
import type { AdmissionClaim } from './admission-claim.js';
import type { AdmissionLimits, QueueWait } from './admission-queue.js';

/**
 * One accepted request's place in a model's admission: a slot, or a place in the queue. Taken at
 * acceptance, so that a refusal is known before the stream opens.
 */
export interface AdmissionTicket {
  /**
   * Runs `work$` once the request holds a slot (at once if it already does); the place is given
   * back when the work completes, fails or is unsubscribed (a hang-up leaves the queue at once).
   * `onAdmitted` is called when the slot is taken (queue time ends).
   */
  run<T>(work$: Observable<T>, onAdmitted?: () => void): Observable<T>;
  /** Gives the place back without running anything (the stream never opened); idempotent. */
  release(): void;
}

/**
 * A model's admission: at most `limits.maxConcurrency` requests run, at most `limits.maxQueue`
 * wait, admitted fairly between tenants (or in FIFO order, `limits.order`). Held in this process (AdmissionQueue) or, with several workers, by the
 * primary for the whole instance; `running` and `queued` are this process's share.
 */
export interface ModelAdmission {
  readonly limits: AdmissionLimits;
  readonly running: number;
  readonly queued: number;
  /** Every wait of a request of this process as it ends: admitted, abandoned or timed out. */
  readonly waits$: Observable<QueueWait>;
  /**
   * A place for one request, or a refusal (`overloaded`, `queue_full`) when there is none.
   * `claim` (default: tenant `default`) says where it waits and what its tenant is charged.
   */
  reserve(model: string, claim?: AdmissionClaim): AdmissionTicket | Promise<AdmissionTicket>;
  /** New limits from a reloaded configuration; requests already holding a place keep it. */
  setLimits(limits: AdmissionLimits): void;
  /**
   * The engine's word on room: requests wait in line while it says none (an HTTP model's
   * `saturation`). An admission that cannot hold for it leaves this out.
   */
  setGate?(gate: DispatchGate | undefined): void;
  /** Requests may be held for the engine's room (their claims are then estimated and charged). */
  readonly gated?: boolean;
}

/** Makes each model's admission: in this process by default, through the primary in a worker. */
export abstract class AdmissionCoordinator {
  abstract admissionFor(model: string, limits: AdmissionLimits): ModelAdmission;
}
