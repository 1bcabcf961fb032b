import { EMPTY, NEVER, defer } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { DispatchGate } from '../engine/dispatch-gate.js';
import type { AdmissionClaim } from './admission-claim.js';
import { AdmissionQueue } from './admission-queue.js';

/** A gate with `room` places: each admission uses one (as an engine counts a send), a reading gives new ones. */
class FakeGate implements DispatchGate {
  private readonly listeners = new Set<() => void>();
  constructor(public room = 0) {}
  hasRoom(): boolean {
    return this.room > 0;
  }
  onRoom(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  /** A fresh reading shows `places` of room. */
  reading(places: number): void {
    this.room = places;
    for (const listener of this.listeners) listener();
  }
  get listening(): number {
    return this.listeners.size;
  }
}

const claimOf = (tenant: string, more: Partial<AdmissionClaim> = {}): AdmissionClaim => ({
  tenant,
  weight: 1,
  priority: 0,
  background: false,
  promptTokens: 100,
  maxTokens: 10,
  ...more,
});

/** Submits a request whose work marks it started and uses one place of the gate's room. */
function submitter(queue: AdmissionQueue, gate: FakeGate, started: string[]) {
  return (name: string, claim: AdmissionClaim) =>
    queue
      .run(
        defer(() => {
          started.push(name);
          gate.room -= 1;
          return NEVER;
        }),
        undefined,
        claim,
      )
      .subscribe();
}

describe('AdmissionQueue with an engine gate (saturation)', () => {
  it('holds requests while the engine has no room, free slots or not, and admits at once while it has', () => {
    const gate = new FakeGate(1);
    const queue = new AdmissionQueue({ maxConcurrency: Number.POSITIVE_INFINITY, maxQueue: 10 });
    queue.setGate(gate);
    const started: string[] = [];
    const submit = submitter(queue, gate, started);
    submit('first', claimOf('a'));
    submit('second', claimOf('a'));
    expect(started).toEqual(['first']);
    expect([queue.running, queue.queued]).toEqual([1, 1]);
    expect(queue.gated).toBe(true);
  });

  it("releases held requests as readings show room, a few at a time, in the fair queue's order", () => {
    const gate = new FakeGate(0);
    const queue = new AdmissionQueue({ maxConcurrency: Number.POSITIVE_INFINITY, maxQueue: 20 });
    queue.setGate(gate);
    const started: string[] = [];
    const submit = submitter(queue, gate, started);
    for (const name of ['n1', 'n2', 'n3', 'n4']) submit(name, claimOf('noisy'));
    submit('q1', claimOf('quiet'));
    submit('u1', claimOf('urgent', { priority: 1 }));
    submit('bg', claimOf('quiet', { background: true }));
    submit('q2', claimOf('quiet'));
    expect(started).toEqual([]);

    gate.reading(2);
    expect(started).toEqual(['u1', 'n1']);
    gate.reading(0);
    expect(started).toHaveLength(2);
    gate.reading(3);
    expect(started).toEqual(['u1', 'n1', 'q1', 'n2', 'q2']);
    gate.reading(3);
    // The quiet tenant's background run after its interactive requests, however early it came.
    expect(started.slice(5)).toEqual(['n3', 'bg', 'n4']);
    expect(queue.queued).toBe(0);
  });

  it('still keeps maxConcurrency: room in the engine does not pass a full slot count', () => {
    const gate = new FakeGate(10);
    const queue = new AdmissionQueue({ maxConcurrency: 1, maxQueue: 10 });
    queue.setGate(gate);
    const started: string[] = [];
    const submit = submitter(queue, gate, started);
    submit('a', claimOf('t'));
    submit('b', claimOf('t'));
    gate.reading(10);
    expect(started).toEqual(['a']);
  });

  it('lets a held request time out or hang up as any waiting one', () => {
    const gate = new FakeGate(0);
    const queue = new AdmissionQueue({ maxConcurrency: Number.POSITIVE_INFINITY, maxQueue: 10 });
    queue.setGate(gate);
    const held = queue.run(EMPTY, undefined, claimOf('t')).subscribe();
    expect(queue.queued).toBe(1);
    held.unsubscribe();
    expect(queue.queued).toBe(0);
  });

  it('removing the gate (a reload without saturation) releases every held request and stops listening', () => {
    const gate = new FakeGate(0);
    const queue = new AdmissionQueue({ maxConcurrency: Number.POSITIVE_INFINITY, maxQueue: 10 });
    queue.setGate(gate);
    const started: string[] = [];
    const submit = submitter(queue, gate, started);
    submit('a', claimOf('t'));
    submit('b', claimOf('t'));
    expect(gate.listening).toBe(1);
    queue.setGate(undefined);
    expect(started).toEqual(['a', 'b']);
    expect(gate.listening).toBe(0);
    expect(queue.gated).toBe(false);
  });
});
