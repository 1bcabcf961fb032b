import { EMPTY, NEVER, Subject, VirtualTimeScheduler, defer } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/gateway-error.js';
import { AdmissionQueue, type QueueWait } from './admission-queue.js';

describe('AdmissionQueue', () => {
  it('runs up to maxConcurrency at once and admits the rest in FIFO order', () => {
    const queue = new AdmissionQueue({ maxConcurrency: 2, maxQueue: 10 });
    const started: string[] = [];
    const works = new Map<string, Subject<string>>();
    const submit = (name: string) => {
      const work = new Subject<string>();
      works.set(name, work);
      return queue
        .run(
          defer(() => {
            started.push(name);
            return work;
          }),
        )
        .subscribe();
    };
    ['a', 'b', 'c', 'd'].forEach(submit);
    expect(started).toEqual(['a', 'b']);
    expect([queue.running, queue.queued]).toEqual([2, 2]);
    works.get('b')!.complete();
    expect(started).toEqual(['a', 'b', 'c']);
    works.get('a')!.complete();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    expect([queue.running, queue.queued]).toEqual([2, 0]);
  });

  it('admits the waiting requests fairly between tenants, by priority, each tenant first come first served; or in FIFO order', () => {
    const order = (queueOrder: 'fair' | 'fifo') => {
      const queue = new AdmissionQueue({ maxConcurrency: 1, maxQueue: 10, order: queueOrder });
      const started: string[] = [];
      const holder = new Subject<string>();
      queue.run(holder).subscribe();
      const submit = (name: string, tenant: string, priority = 0) =>
        queue
          .run(
            defer(() => {
              started.push(name);
              return EMPTY;
            }),
            undefined,
            { tenant, weight: 1, priority, background: false, promptTokens: 10, maxTokens: 0 },
          )
          .subscribe();
      ['n1', 'n2', 'n3'].forEach((name) => submit(name, 'noisy'));
      submit('q1', 'quiet');
      submit('u1', 'urgent', 1);
      holder.complete();
      return started;
    };
    expect(order('fair')).toEqual(['u1', 'n1', 'q1', 'n2', 'n3']);
    expect(order('fifo')).toEqual(['n1', 'n2', 'n3', 'q1', 'u1']);
  });

  it('refuses a request when every slot and the whole queue are taken', () => {
    const queue = new AdmissionQueue({ maxConcurrency: 1, maxQueue: 1 });
    queue.run(NEVER).subscribe();
    expect(() => queue.checkCapacity('m')).not.toThrow();
    queue.run(NEVER).subscribe();
    let refusal: unknown;
    try {
      queue.checkCapacity('m');
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(GatewayError);
    expect(refusal).toMatchObject({ kind: 'overloaded', code: 'queue_full', retryAfterSeconds: 1 });
  });

  it('lets a waiting request leave the queue at once when it is unsubscribed', () => {
    const queue = new AdmissionQueue({ maxConcurrency: 1, maxQueue: 5 });
    const running = queue.run(NEVER).subscribe();
    let secondStarted = false;
    const waiting = queue.run(new Subject()).subscribe({ next: () => undefined });
    const third = queue.run(NEVER);
    waiting.unsubscribe();
    expect(queue.queued).toBe(0);
    third.subscribe({ next: () => (secondStarted = true) });
    expect(queue.queued).toBe(1);
    running.unsubscribe();
    expect([queue.running, queue.queued]).toEqual([1, 0]);
    expect(secondStarted).toBe(false);
  });

  it('frees the slot when the running work fails', () => {
    const queue = new AdmissionQueue({ maxConcurrency: 1, maxQueue: 1 });
    const work = new Subject<number>();
    queue.run(work).subscribe({ error: () => undefined });
    work.error(new Error('engine down'));
    expect(queue.running).toBe(0);
  });

  it('fails a request that waits longer than queueTimeoutMs', () => {
    const scheduler = new VirtualTimeScheduler();
    const queue = new AdmissionQueue({ maxConcurrency: 1, maxQueue: 1, queueTimeoutMs: 100 }, scheduler);
    queue.run(NEVER).subscribe();
    let failure: unknown;
    queue.run(NEVER).subscribe({ error: (error) => (failure = error) });
    scheduler.flush();
    expect(failure).toMatchObject({ kind: 'overloaded', code: 'queue_timeout' });
    expect(queue.queued).toBe(0);
  });

  it("reports each request's queue wait when it ends: admitted, abandoned or timed out", () => {
    const scheduler = new VirtualTimeScheduler();
    const queue = new AdmissionQueue({ maxConcurrency: 1, maxQueue: 5, queueTimeoutMs: 500 }, scheduler);
    const waits: QueueWait[] = [];
    queue.waits$.subscribe((wait) => waits.push(wait));
    const holder = new Subject<string>();
    queue.run(holder).subscribe();
    const second = queue.run(NEVER).subscribe();
    const third = queue.run(NEVER).subscribe();
    queue.run(NEVER).subscribe({ error: () => undefined });
    scheduler.schedule(() => third.unsubscribe(), 100);
    scheduler.schedule(() => holder.complete(), 200);
    scheduler.flush();
    second.unsubscribe();
    expect(waits).toEqual([
      { outcome: 'admitted', waitMs: 0 },
      { outcome: 'abandoned', waitMs: 100 },
      { outcome: 'admitted', waitMs: 200 },
      { outcome: 'timed_out', waitMs: 500 },
    ]);
  });
});
