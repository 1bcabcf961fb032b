import type { AdmissionClaim } from '../admission/admission-claim.js';
import type { AdmissionLimits } from '../admission/admission-queue.js';
import type { WindowCharge } from '../auth/limit-store.js';
import type { InstanceAdmission } from './instance-admission.js';
import type { InstanceLimits } from './instance-limits.js';
import type { IpcChannel } from './ipc-channel.js';
import type { ReserveAnswer } from './worker-protocol.js';

/** The primary's side of a worker's admission: reserve (answered), release, and the word of a slot or a timeout. */
export function serveAdmission(channel: IpcChannel, worker: number, admission: InstanceAdmission): void {
  channel.handle<{ ticket: number; model: string; limits: AdmissionLimits; claim?: AdmissionClaim }>('reserve', ({ ticket, model, limits, claim }): ReserveAnswer => {
    // A free slot is told in the answer itself; a queued ticket hears of its slot later.
    let answered = false;
    let admitted = false;
    admission.reserve(worker, ticket, model, limits, {
      admitted: () => (answered ? channel.notify('admitted', { ticket }) : (admitted = true)),
      timedOut: (message) => channel.notify('timedOut', { ticket, message }),
    }, claim);
    answered = true;
    return { admitted };
  });
  channel.on<{ ticket: number; served?: AdmissionClaim['served'] }>('release', ({ ticket, served }) => admission.release(worker, ticket, served));
}

/** The primary's side of a worker's per-key limits (`store: memory`). */
export function serveLimits(channel: IpcChannel, worker: number, limits: InstanceLimits): void {
  channel.handle<{ key: string; windowMs: number }>('hit', ({ key, windowMs }) => limits.hit(key, windowMs));
  channel.handle<{ keys: string[] }>('peek', ({ keys }) => limits.peek(keys));
  channel.on<{ charges: WindowCharge[] }>('charge', ({ charges }) => void limits.charge(charges));
  channel.handle<{ key: string; max: number }>('acquire', async ({ key, max }) => (await limits.acquire(worker, key, max)) ?? null);
  channel.on<{ key: string; lease: string }>('releaseLease', ({ key, lease }) => void limits.release(worker, key, lease));
}
