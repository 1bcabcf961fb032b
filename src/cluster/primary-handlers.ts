import type { AdmissionClaim } from '../admission/admission-claim.js';
import type { AdmissionLimits } from '../admission/admission-queue.js';
import type { BudgetWindow, Reservation, ReservationAsk } from '../auth/limit-store.js';
import type { InstanceAdmission } from './instance-admission.js';
import type { InstanceLimits } from './instance-limits.js';
import type { ResponseObject, StoredEvent, StoredResponse } from '../stored-responses/response-store.js';
import type { InstanceResponses } from './instance-responses.js';
import { toWire, type IpcChannel } from './ipc-channel.js';
import type { ReserveAnswer, StoredEventsMessage, SubscriptionEnd } from './worker-protocol.js';

/** The primary's side of a worker's admission: reserve (answered), release, and the word of a slot or a timeout. */
export function serveAdmission(channel: IpcChannel, worker: number, admission: InstanceAdmission): void {
  channel.handle<{ ticket: number; model: string; limits: AdmissionLimits; claim?: AdmissionClaim }>(
    'reserve',
    ({ ticket, model, limits, claim }): ReserveAnswer => {
      // A free slot is told in the answer itself; a queued ticket hears of its slot later.
      let answered = false;
      let admitted = false;
      admission.reserve(
        worker,
        ticket,
        model,
        limits,
        {
          admitted: () => (answered ? channel.notify('admitted', { ticket }) : (admitted = true)),
          timedOut: (message) => channel.notify('timedOut', { ticket, message }),
        },
        claim,
      );
      answered = true;
      return { admitted };
    },
  );
  channel.on<{ ticket: number; served?: AdmissionClaim['served'] }>('release', ({ ticket, served }) =>
    admission.release(worker, ticket, served),
  );
}

/** The primary's side of a worker's per-key limits (`store: memory`). */
export function serveLimits(channel: IpcChannel, worker: number, limits: InstanceLimits): void {
  channel.handle<{ key: string; windowMs: number; limit: number }>('hit', ({ key, windowMs, limit }) =>
    limits.hit(key, windowMs, limit),
  );
  channel.handle<{ ask: ReservationAsk }>('reserveTokens', ({ ask }) => limits.reserve(ask));
  channel.on<{ budgets: BudgetWindow[]; reservation: Reservation; used: number }>(
    'settleTokens',
    ({ budgets, reservation, used }) => void limits.settle(budgets, reservation, used),
  );
  channel.handle<{ key: string; max: number }>(
    'acquire',
    async ({ key, max }) => (await limits.acquire(worker, key, max)) ?? null,
  );
  channel.on<{ key: string; lease: string }>(
    'releaseLease',
    ({ key, lease }) => void limits.release(worker, key, lease),
  );
}

/** The primary's side of a worker's stored responses (`responses.store: memory`): the store's calls, its followers and cancel listeners. */
export function serveResponses(channel: IpcChannel, worker: number, responses: InstanceResponses): void {
  const { store } = responses;
  channel.handle<{ record: StoredResponse }>('responses.create', ({ record }) => store.create(record));
  channel.handle<{ response: ResponseObject }>('responses.update', ({ response }) => store.update(response));
  channel.handle<{ id: string }>('responses.get', ({ id }) => store.get(id));
  channel.handle<{ ids: string[]; maxBytes: number | null }>('responses.items', async ({ ids, maxBytes }) => [
    ...(await store.items(ids, maxBytes ?? undefined)),
  ]);
  channel.handle<{ id: string }>('responses.delete', ({ id }) => store.delete(id));
  channel.handle<{ id: string; events: StoredEvent[]; final: boolean }>('responses.append', ({ id, events, final }) =>
    store.append(id, events, final),
  );
  channel.handle<{ id: string }>('responses.requestCancel', ({ id }) => store.requestCancel(id));
  const end = (subscription: number) => (error?: unknown) =>
    channel.notify('responses.end', {
      subscription,
      error: error === undefined ? undefined : toWire(error),
    } satisfies SubscriptionEnd);
  channel.on<{ subscription: number; id: string; after: number }>('responses.follow', ({ subscription, id, after }) =>
    responses.follow(worker, subscription, id, after, {
      next: (events) => channel.notify('responses.events', { subscription, events } satisfies StoredEventsMessage),
      end: end(subscription),
    }),
  );
  channel.on<{ subscription: number; id: string }>('responses.listenCancel', ({ subscription, id }) =>
    responses.listenCancel(worker, subscription, id, { end: end(subscription) }),
  );
  channel.on<{ subscription: number }>('responses.unsubscribe', ({ subscription }) =>
    responses.unsubscribe(worker, subscription),
  );
}
