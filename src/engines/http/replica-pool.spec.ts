import { describe, expect, it } from 'vitest';
import { ReplicaPool, type Replica } from './replica-pool.js';

function pool(count = 3, policy = { maxFailures: 2, baseMs: 1000, maxMs: 3000 }) {
  const clock = { now: 0 };
  const replicas = new ReplicaPool(
    Array.from({ length: count }, (_, index) => `http://10.0.0.${index + 1}:8000/v1`),
    policy,
    () => clock.now,
  );
  const [a, b, c] = replicas.replicas;
  return { replicas, clock, a, b, c };
}

const urlOf = (replica: Replica | undefined) => replica?.url.slice(7, 15);

describe('ReplicaPool', () => {
  it('picks the replica with the fewest outstanding requests', () => {
    const { replicas, a, b, c } = pool();
    a.outstanding = 2;
    b.outstanding = 0;
    c.outstanding = 1;
    expect(replicas.pick()).toBe(b);
    b.outstanding = 3;
    expect(replicas.pick()).toBe(c);
  });

  it('rotates between equally loaded replicas, so sequential traffic spreads', () => {
    const { replicas } = pool();
    expect([1, 2, 3, 4, 5, 6].map(() => urlOf(replicas.pick()))).toEqual([
      '10.0.0.1',
      '10.0.0.2',
      '10.0.0.3',
      '10.0.0.1',
      '10.0.0.2',
      '10.0.0.3',
    ]);
  });

  it('skips the replicas already tried by a request, and answers none when all were', () => {
    const { replicas, a, b, c } = pool();
    expect(replicas.pick(new Set([a, b]))).toBe(c);
    expect(replicas.pick(new Set([a, b, c]))).toBeUndefined();
  });

  it('ejects after maxFailures consecutive failures, for an exponentially growing time', () => {
    const { replicas, clock, a } = pool();
    expect(replicas.recordFailure(a)).toBeUndefined();
    expect(replicas.recordFailure(a)).toBe(1000);
    expect(replicas.states()[0]).toMatchObject({ healthy: false, consecutiveFailures: 2, ejectedForMs: 1000 });
    expect([1, 2, 3].map(() => replicas.pick())).not.toContain(a);

    clock.now = 1000;
    expect(replicas.states()[0].healthy).toBe(true);
    // On probation: one more failure ejects it again, for twice as long, capped at maxMs.
    expect(replicas.recordFailure(a)).toBe(2000);
    clock.now = 3000;
    expect(replicas.recordFailure(a)).toBe(3000);
  });

  it('does not lengthen an ejection for requests that fail while it lasts', () => {
    const { replicas, a } = pool();
    replicas.recordFailure(a);
    expect(replicas.recordFailure(a)).toBe(1000);
    expect(replicas.recordFailure(a)).toBeUndefined();
    expect(replicas.recordFailure(a)).toBeUndefined();
    expect(replicas.states()[0].ejectedForMs).toBe(1000);
  });

  it('forgets failures and back-off after a success', () => {
    const { replicas, clock, a } = pool();
    replicas.recordFailure(a);
    replicas.recordFailure(a);
    clock.now = 1000;
    replicas.recordSuccess(a);
    expect(replicas.states()[0].consecutiveFailures).toBe(0);
    expect(replicas.recordFailure(a)).toBeUndefined();
    expect(replicas.recordFailure(a)).toBe(1000);
  });

  it('takes a replica out while its health check fails; a passing check does not cut an ejection short', () => {
    const { replicas, a, b, c } = pool();
    replicas.recordHealthCheck(a, 'failing');
    expect([1, 2, 3, 4].map(() => replicas.pick())).not.toContain(a);
    replicas.recordHealthCheck(a, 'passing');
    expect(replicas.pick(new Set([b, c]))).toBe(a);
    // No probe route: served, watched by the passive checks alone.
    replicas.recordHealthCheck(a, 'unknown');
    expect(replicas.pick(new Set([b, c]))).toBe(a);

    replicas.recordFailure(b);
    replicas.recordFailure(b);
    replicas.recordHealthCheck(b, 'passing');
    expect(replicas.pick(new Set([a, c]))).toBeUndefined();
  });

  it('is ready while at least one replica is available', () => {
    const { replicas, a, b, c } = pool();
    replicas.recordHealthCheck(a, 'failing');
    replicas.recordHealthCheck(b, 'failing');
    expect(replicas.hasAvailable()).toBe(true);
    replicas.recordFailure(c);
    replicas.recordFailure(c);
    expect(replicas.hasAvailable()).toBe(false);
    expect(replicas.states().map((state) => state.healthy)).toEqual([false, false, false]);
  });
});

describe('replica labels', () => {
  it('never show credentials written into an upstream URL', () => {
    const pool = new ReplicaPool(['http://user:secret@10.0.0.5:8000/v1', 'http://10.0.0.6:8000/v1'], {
      maxFailures: 3,
      baseMs: 1000,
      maxMs: 60_000,
    });
    expect(pool.states().map((state) => state.url)).toEqual(['http://10.0.0.5:8000/v1', 'http://10.0.0.6:8000/v1']);
  });
});
