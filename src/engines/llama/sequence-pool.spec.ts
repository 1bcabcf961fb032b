import { describe, expect, it } from 'vitest';
import { SequencePool } from './sequence-pool.js';

interface FakeSequence {
  name: string;
  cached: number[];
}

function pool(...sequences: FakeSequence[]) {
  return new SequencePool(sequences, (sequence, prompt) => {
    let shared = 0;
    while (shared < prompt.length && sequence.cached[shared] === prompt[shared]) shared += 1;
    return shared;
  });
}

describe('SequencePool', () => {
  it('lends the idle sequence that already holds the longest prefix of the prompt', async () => {
    const cold = { name: 'cold', cached: [9, 9] };
    const warm = { name: 'warm', cached: [1, 2, 3] };
    const sequences = pool(cold, warm);
    expect((await sequences.acquire([1, 2, 7])).name).toBe('warm');
    expect((await sequences.acquire([1, 2, 7])).name).toBe('cold');
    expect(sequences.idleCount).toBe(0);
  });

  it('makes requests wait in order when every sequence is lent, and serves them on release', async () => {
    const only = { name: 'only', cached: [] };
    const sequences = pool(only);
    const first = await sequences.acquire([]);
    const served: string[] = [];
    const second = sequences.acquire([]).then(() => served.push('second'));
    const third = sequences.acquire([]).then(() => served.push('third'));
    await Promise.resolve();
    expect(served).toEqual([]);
    sequences.release(first);
    await second;
    expect(served).toEqual(['second']);
    sequences.release(only);
    await third;
    expect(served).toEqual(['second', 'third']);
  });

  it('drops a waiter whose signal aborts, and rejects waiters when closed', async () => {
    const only = { name: 'only', cached: [] };
    const sequences = pool(only);
    await sequences.acquire([]);
    const controller = new AbortController();
    const abandoned = sequences.acquire([], controller.signal);
    controller.abort(new Error('hung up'));
    await expect(abandoned).rejects.toThrow('hung up');
    const waiting = sequences.acquire([]);
    sequences.close(new Error('shutting down'));
    await expect(waiting).rejects.toThrow('shutting down');
    await expect(sequences.acquire([])).rejects.toThrow('shutting down');
    sequences.release(only);
    expect(sequences.idleCount).toBe(1);
  });
});
