import { NEVER, Subject, defer } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { AdmissionClaim } from '../admission/admission-claim.js';
import type { AdmissionLimits, QueueWait } from '../admission/admission-queue.js';
import type { AdmissionTicket, ModelAdmission } from '../admission/model-admission.js';
import { ClusterAdmission } from './cluster-admission.js';
import { InstanceAdmission } from './instance-admission.js';
import { IpcChannel, type ChannelMessage } from './ipc-channel.js';
import { serveAdmission } from './primary-handlers.js';

/** Messages are delivered on a later turn, as copies (JSON), as Node's IPC does. */
const later = (deliver: () => void) => setImmediate(deliver);
const copied = (message: ChannelMessage): ChannelMessage => JSON.parse(JSON.stringify(message));
const settle = () => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));

/**
 * A primary holding the instance's admission and `count` workers linked to it by in-memory
 * channels: the workers' ClusterAdmission talks to the primary's InstanceAdmission as it does
 * over IPC, the same handlers in between.
 */
function instance(count: number, configured: Record<string, AdmissionLimits> = {}) {
  const primary = new InstanceAdmission((model) => configured[model]);
  const workers = Array.from({ length: count }, (_, index) => {
    const id = index + 1;
    let toWorker: IpcChannel | undefined;
    const toPrimary = new IpcChannel((message: ChannelMessage) => later(() => primarySide.receive(copied(message))));
    const primarySide = new IpcChannel((message: ChannelMessage) => later(() => toWorker!.receive(copied(message))));
    toWorker = toPrimary;
    serveAdmission(primarySide, id, primary);
    return { id, admission: new ClusterAdmission(toPrimary) };
  });
  return { primary, workers };
}

const limits = (maxConcurrency: number, maxQueue: number, queueTimeoutMs?: number): AdmissionLimits => ({
  maxConcurrency,
  maxQueue,
  queueTimeoutMs,
});

/** Runs a ticket's work, recording when it starts and how it ends. */
function runTicket(ticket: AdmissionTicket, name: string, log: string[]) {
  const work = new Subject<string>();
  const subscription = ticket
    .run(
      defer(() => {
        log.push(`${name} started`);
        return work;
      }),
    )
    .subscribe({ error: (error: Error) => log.push(`${name} failed: ${error.message}`) });
  return { finish: () => work.complete(), hangUp: () => subscription.unsubscribe() };
}

async function reserve(admission: ModelAdmission, model = 'm', claim?: AdmissionClaim): Promise<AdmissionTicket> {
  return admission.reserve(model, claim);
}

const claimOf = (tenant: string, promptTokens = 100): AdmissionClaim => ({
  tenant,
  weight: 1,
  priority: 0,
  background: false,
  promptTokens,
  maxTokens: 0,
});

describe('admission for the instance, through the primary', () => {
  it('admits maxConcurrency requests across workers and refuses the rest before they run', async () => {
    const { primary, workers } = instance(2);
    const admissions = workers.map((worker) => worker.admission.admissionFor('m', limits(2, 0)));
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, (_, index) => reserve(admissions[index % 2])));

    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(2);
    const refusals = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
    expect(refusals).toHaveLength(6);
    for (const refusal of refusals)
      expect(refusal).toMatchObject({ kind: 'overloaded', code: 'queue_full', retryAfterSeconds: 1 });
    expect(primary.totals).toEqual({ running: 2, queued: 0 });
    expect(admissions[0].running + admissions[1].running).toBe(2);
  });

  it('queues in one FIFO across workers; a hang-up while queued leaves the queue at once, and an ended request lets the next run', async () => {
    const { primary, workers } = instance(2);
    const [a, b] = workers.map((worker) => worker.admission.admissionFor('m', limits(1, 5)));
    const log: string[] = [];
    const first = runTicket(await reserve(a), 'first', log);
    const second = runTicket(await reserve(b), 'second', log);
    const third = runTicket(await reserve(a), 'third', log);
    const fourth = runTicket(await reserve(b), 'fourth', log);
    await settle();
    expect(log).toEqual(['first started']);
    expect(primary.totals).toEqual({ running: 1, queued: 3 });
    expect([a.queued, b.queued]).toEqual([1, 2]);

    second.hangUp();
    await settle();
    expect(primary.totals).toEqual({ running: 1, queued: 2 });
    first.finish();
    await settle();
    expect(log).toEqual(['first started', 'third started']);
    third.finish();
    await settle();
    expect(log).toEqual(['first started', 'third started', 'fourth started']);
    fourth.hangUp();
    await settle();
    expect(primary.totals).toEqual({ running: 0, queued: 0 });
    expect([a.running, a.queued, b.running, b.queued]).toEqual([0, 0, 0, 0]);
  });

  it('decides the fair order in the primary for every worker: a quiet tenant goes ahead of a noisy one queued on the other worker, each charged what it used', async () => {
    const { primary, workers } = instance(2);
    const [a, b] = workers.map((worker) => worker.admission.admissionFor('m', limits(1, 20)));
    const log: string[] = [];
    const noisy = [];
    for (let index = 0; index < 4; index += 1)
      noisy.push(runTicket(await reserve(a, 'm', claimOf('noisy')), `noisy-${index}`, log));
    const quietClaim = claimOf('quiet');
    const quiet = runTicket(await reserve(b, 'm', quietClaim), 'quiet', log);
    await settle();
    expect(log).toEqual(['noisy-0 started']);
    noisy[0].finish();
    await settle();
    // Not behind the three noisy requests queued before it: the quiet tenant had no service yet.
    expect(log).toEqual(['noisy-0 started', 'quiet started']);
    // The tokens it used travel with the release and settle its charge in the primary.
    quietClaim.served = { promptTokens: 100, completionTokens: 5000 };
    quiet.finish();
    await settle();
    expect(log.slice(2)).toEqual(['noisy-1 started']);
    const again = runTicket(await reserve(b, 'm', claimOf('quiet')), 'quiet again', log);
    noisy[1].finish();
    await settle();
    // The quiet tenant used 5,100 tokens: the noisy one's waiting requests now go first.
    expect(log.slice(3)).toEqual(['noisy-2 started']);
    for (const request of [...noisy.slice(1), again]) request.hangUp();
    await settle();
    expect(primary.totals).toEqual({ running: 0, queued: 0 });
  });

  it('fails a request that waited queueTimeoutMs, in-band, and reports the wait', async () => {
    const { primary, workers } = instance(1);
    const admission = workers[0].admission.admissionFor('m', limits(1, 1, 30));
    const waits: QueueWait[] = [];
    admission.waits$.subscribe((wait) => waits.push(wait));
    const log: string[] = [];
    runTicket(await reserve(admission), 'running', log);
    runTicket(await reserve(admission), 'waiting', log);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(log).toEqual(['running started', 'waiting failed: Waited 30 ms in the queue without a free slot.']);
    expect(waits.map((wait) => wait.outcome)).toEqual(['admitted', 'timed_out']);
    expect(primary.totals).toEqual({ running: 1, queued: 0 });
    expect(admission.queued).toBe(0);
  });

  it("gives back a dead worker's places at once: the next in line runs", async () => {
    const { primary, workers } = instance(2);
    const [dying, living] = workers.map((worker) => worker.admission.admissionFor('m', limits(1, 5)));
    const log: string[] = [];
    runTicket(await reserve(dying), 'held by the dying worker', log);
    runTicket(await reserve(living), 'waiting on the other', log);
    await settle();
    expect(primary.releaseWorker(workers[0].id)).toBe(1);
    await settle();
    expect(log).toEqual(['held by the dying worker started', 'waiting on the other started']);
  });

  it('gives back a place whose stream never opened', async () => {
    const { primary, workers } = instance(1);
    const admission = workers[0].admission.admissionFor('m', limits(1, 0));
    const ticket = await reserve(admission);
    await expect(Promise.resolve(admission.reserve('m'))).rejects.toMatchObject({ code: 'queue_full' });
    ticket.release();
    ticket.release();
    await settle();
    expect(primary.totals).toEqual({ running: 0, queued: 0 });
    await expect(Promise.resolve(admission.reserve('m'))).resolves.toBeDefined();
  });

  it('asks the primary nothing for a model without a concurrency limit', async () => {
    const { primary, workers } = instance(1);
    const admission = workers[0].admission.admissionFor('free', limits(Number.POSITIVE_INFINITY, 1024));
    const ticket = admission.reserve('free');
    expect(ticket).not.toBeInstanceOf(Promise);
    (ticket as AdmissionTicket).run(NEVER).subscribe();
    expect(admission.running).toBe(1);
    expect(primary.queueOf('free')).toBeUndefined();
  });

  it("uses the primary's configured limits, and follows a reload of them", async () => {
    const configured = { m: limits(1, 0) };
    const { primary, workers } = instance(1, configured);
    // The worker still has older limits: the primary's own configuration decides.
    const admission = workers[0].admission.admissionFor('m', limits(5, 5));
    await reserve(admission);
    await expect(Promise.resolve(admission.reserve('m'))).rejects.toMatchObject({ code: 'queue_full' });
    primary.reconfigure((model) => (model === 'm' ? limits(2, 0) : undefined));
    await expect(Promise.resolve(admission.reserve('m'))).resolves.toBeDefined();
    expect(primary.totals.running).toBe(2);
  });
});
