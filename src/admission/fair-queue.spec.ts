import { describe, expect, it } from 'vitest';
import type { AdmissionClaim } from './admission-claim.js';
import { FairQueue, type FairEntry } from './fair-queue.js';

const claimOf = (tenant: string, more: Partial<AdmissionClaim> = {}): AdmissionClaim => ({
  tenant,
  weight: 1,
  priority: 0,
  background: false,
  promptTokens: 100,
  ...more,
});
const labelOf = (entry: FairEntry | undefined) => (entry as (FairEntry & { label?: string }) | undefined)?.label;
const entryOf = (
  tenant: string,
  more: Partial<AdmissionClaim> = {},
  label?: string,
): FairEntry & { label?: string } => ({ claim: claimOf(tenant, more), label });

/** A deterministic pseudo-random sequence (mulberry32), so that runs never differ. */
function randomFrom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

interface Running {
  entry: FairEntry;
  tokens: number;
  endsAt: number;
}

/**
 * A saturated model in virtual time: `slots` run at once, each at one token per time unit, and
 * every tenant always has requests waiting (random prompt and output lengths). Returns the tokens
 * each tenant was served after the first tenth of the run.
 */
function saturate(
  queue: FairQueue,
  tenants: Record<string, Partial<AdmissionClaim>>,
  { slots = 4, requests = 20_000, seed = 7 } = {},
) {
  const random = randomFrom(seed);
  const served: Record<string, number> = Object.fromEntries(Object.keys(tenants).map((name) => [name, 0]));
  const lengths = new Map<FairEntry, { prompt: number; output: number }>();
  const refill = (tenant: string) => {
    const prompt = 20 + Math.floor(random() * 400);
    const output = 10 + Math.floor(random() * 500);
    const entry = entryOf(tenant, { ...tenants[tenant], promptTokens: prompt });
    lengths.set(entry, { prompt, output });
    queue.enqueue(entry);
  };
  for (const tenant of Object.keys(tenants)) for (let index = 0; index < slots * 2; index += 1) refill(tenant);
  let now = 0;
  const running: Running[] = [];
  const start = () => {
    const entry = queue.dequeue()!;
    const { prompt, output } = lengths.get(entry)!;
    running.push({ entry, tokens: prompt + output, endsAt: now + prompt + output });
    refill(entry.claim.tenant);
  };
  for (let index = 0; index < slots; index += 1) start();
  for (let finished = 0; finished < requests; finished += 1) {
    running.sort((a, b) => a.endsAt - b.endsAt);
    const done = running.shift()!;
    now = done.endsAt;
    const { prompt, output } = lengths.get(done.entry)!;
    done.entry.claim.served = { promptTokens: prompt, completionTokens: output };
    queue.settle(done.entry);
    if (finished > requests / 10) served[done.entry.claim.tenant] += done.tokens;
    start();
  }
  return served;
}

const sharesOf = (served: Record<string, number>) => {
  const total = Object.values(served).reduce((sum, tokens) => sum + tokens, 0);
  return Object.fromEntries(Object.entries(served).map(([tenant, tokens]) => [tenant, tokens / total]));
};

describe('FairQueue', () => {
  it('shares a saturated model in tokens within 10% of the weights', () => {
    const shares = sharesOf(saturate(new FairQueue(), { a: { weight: 1 }, b: { weight: 2 }, c: { weight: 5 } }));
    const expected = { a: 1 / 8, b: 2 / 8, c: 5 / 8 };
    for (const tenant of ['a', 'b', 'c'] as const) {
      expect(Math.abs(shares[tenant] - expected[tenant]) / expected[tenant]).toBeLessThan(0.1);
    }
  });

  it('shares tokens, not requests: a tenant of long requests gets as many tokens as one of short ones, in fewer requests', () => {
    const queue = new FairQueue();
    const served = { long: 0, short: 0 };
    const requests = { long: 0, short: 0 };
    const sizes = { long: 1000, short: 50 };
    const waiting = (tenant: 'long' | 'short') =>
      queue.enqueue(entryOf(tenant, { promptTokens: sizes[tenant], maxTokens: 0 }));
    for (let index = 0; index < 4; index += 1) (['long', 'short'] as const).forEach(waiting);
    for (let index = 0; index < 4000; index += 1) {
      const entry = queue.dequeue()!;
      const tenant = entry.claim.tenant as 'long' | 'short';
      entry.claim.served = { promptTokens: sizes[tenant], completionTokens: 0 };
      queue.settle(entry);
      served[tenant] += sizes[tenant];
      requests[tenant] += 1;
      waiting(tenant);
    }
    expect(Math.abs(served.long / served.short - 1)).toBeLessThan(0.1);
    expect(requests.short).toBeGreaterThan(requests.long * 10);
  });

  it('starves nobody: a tenant of weight 0.01 is served, and a newcomer goes ahead of 10,000 requests of another tenant', () => {
    const light = sharesOf(
      saturate(new FairQueue(), { heavy: { weight: 100 }, light: { weight: 1 } }, { requests: 20_000 }),
    );
    expect(light.light).toBeGreaterThan(0);
    expect(Math.abs(light.light - 1 / 101) / (1 / 101)).toBeLessThan(0.1);

    const queue = new FairQueue();
    for (let index = 0; index < 10_000; index += 1) queue.enqueue(entryOf('noisy'));
    queue.dequeue();
    queue.enqueue(entryOf('quiet'));
    const next = [queue.dequeue()!, queue.dequeue()!].map((entry) => entry.claim.tenant);
    expect(next).toContain('quiet');
  });

  it('admits the requests of one tenant first come, first served, its background runs after its interactive ones', () => {
    const queue = new FairQueue();
    const order = [
      entryOf('a', {}, 'a1'),
      entryOf('a', { background: true }, 'a-bg1'),
      entryOf('b', {}, 'b1'),
      entryOf('a', {}, 'a2'),
      entryOf('b', { background: true }, 'b-bg1'),
      entryOf('a', {}, 'a3'),
      entryOf('b', {}, 'b2'),
    ];
    order.forEach((entry) => queue.enqueue(entry));
    const admitted: string[] = [];
    for (let entry = queue.dequeue(); entry; entry = queue.dequeue()) admitted.push(labelOf(entry)!);
    expect(admitted.filter((label) => label.startsWith('a'))).toEqual(['a1', 'a2', 'a3', 'a-bg1']);
    expect(admitted.filter((label) => label.startsWith('b'))).toEqual(['b1', 'b2', 'b-bg1']);
    // The tenants take turns (equal weights, equal costs), the earlier arrival first on a tie.
    expect(admitted.slice(0, 4)).toEqual(['a1', 'b1', 'a2', 'b2']);
  });

  it('admits a waiting request of a higher priority first, whatever service its tenant had', () => {
    const queue = new FairQueue();
    // The urgent tenant has been served a lot already.
    for (let index = 0; index < 50; index += 1)
      queue.admitNow(entryOf('urgent', { priority: 5, promptTokens: 10_000 }));
    queue.enqueue(entryOf('normal', {}, 'n1'));
    queue.enqueue(entryOf('urgent', { priority: 5 }, 'u1'));
    queue.enqueue(entryOf('normal', {}, 'n2'));
    queue.enqueue(entryOf('urgent', { priority: 5 }, 'u2'));
    queue.enqueue(entryOf('low', { priority: -1 }, 'l1'));
    const admitted: string[] = [];
    for (let entry = queue.dequeue(); entry; entry = queue.dequeue()) admitted.push(labelOf(entry)!);
    expect(admitted).toEqual(['u1', 'u2', 'n1', 'n2', 'l1']);
  });

  it('banks no credit for idle time: a tenant back from idle starts level with the busy one', () => {
    const queue = new FairQueue();
    // Only the busy tenant for a long while (10,000 requests), then both wait.
    for (let index = 0; index < 10_000; index += 1) {
      const entry = entryOf('busy', { promptTokens: 100, maxTokens: 0 });
      queue.admitNow(entry);
      entry.claim.served = { promptTokens: 100, completionTokens: 0 };
      queue.settle(entry);
    }
    for (let index = 0; index < 20; index += 1) {
      queue.enqueue(entryOf('busy', { maxTokens: 0 }));
      queue.enqueue(entryOf('back', { maxTokens: 0 }));
    }
    const firstTwenty = Array.from({ length: 20 }, () => queue.dequeue()!.claim.tenant);
    expect(firstTwenty.filter((tenant) => tenant === 'back').length).toBe(10);
  });

  it('banks no credit while a request runs: a tenant that runs one long answer without waiting, then bursts, takes turns with the busy one', () => {
    const queue = new FairQueue();
    // One long answer runs for the whole while, charged only its estimate; nothing of its tenant waits.
    queue.admitNow(entryOf('runner', { promptTokens: 100 }));
    for (let index = 0; index < 4; index += 1) queue.enqueue(entryOf('busy', { maxTokens: 0 }));
    for (let index = 0; index < 200; index += 1) {
      const entry = queue.dequeue()!;
      entry.claim.served = { promptTokens: 100, completionTokens: 0 };
      queue.settle(entry);
      queue.enqueue(entryOf('busy', { maxTokens: 0 }));
    }
    // The burst: lifted to the level's virtual time as it becomes backlogged, running answer or not.
    for (let index = 0; index < 8; index += 1) queue.enqueue(entryOf('runner', { maxTokens: 0 }));
    const next = Array.from({ length: 8 }, () => queue.dequeue()!.claim.tenant[0]).join('');
    expect(next.split('').filter((tenant) => tenant === 'r').length, next).toBeLessThanOrEqual(5);
    expect(next).toContain('r');
  });

  it('charges an estimate at admission and settles what the engine reported', () => {
    const queue = new FairQueue();
    // An over-estimate (max_tokens 4000, 10 used) is given back at the end: equal use, equal turns afterwards.
    const generous = entryOf('generous', { promptTokens: 100, maxTokens: 4000 });
    const exact = entryOf('exact', { promptTokens: 100, maxTokens: 10 });
    queue.admitNow(generous);
    queue.admitNow(exact);
    expect(generous.charged).toBe(100 + 256);
    expect(exact.charged).toBe(110);
    queue.enqueue(entryOf('generous', {}, 'g'));
    queue.enqueue(entryOf('exact', {}, 'e'));
    // While the over-estimate stands, the other tenant goes first.
    expect(labelOf(queue.dequeue())).toBe('e');
    generous.claim.served = { promptTokens: 100, completionTokens: 10 };
    queue.settle(generous);
    expect(labelOf(queue.dequeue())).toBe('g');
  });

  it('in fifo order admits by arrival alone, and a change of order keeps the arrival order', () => {
    const queue = new FairQueue('fifo');
    const labels = ['a1', 'a2', 'b1', 'a3', 'b2'];
    labels.forEach((label) =>
      queue.enqueue(entryOf(label[0], { background: label === 'a2', priority: label === 'b2' ? 9 : 0 }, label)),
    );
    expect(labelOf(queue.dequeue())).toBe('a1');
    queue.setOrder('fair');
    const admitted: string[] = [];
    for (let entry = queue.dequeue(); entry; entry = queue.dequeue()) admitted.push(labelOf(entry)!);
    expect(admitted).toEqual(['b2', 'b1', 'a3', 'a2']);
  });

  it('costs O(log n) comparisons per operation with 10,000 waiting (counted, not timed)', () => {
    const costPerOperation = (waiting: number) => {
      const queue = new FairQueue();
      const entries = Array.from({ length: waiting }, (_, index) =>
        entryOf(`tenant-${index}`, { promptTokens: 1 + (index % 97) }),
      );
      entries.forEach((entry) => queue.enqueue(entry));
      const before = queue.comparisons;
      let operations = 0;
      let taken = 0;
      // Hang-ups from the middle, admissions, and newcomers, interleaved.
      for (let index = 0; index < 1000; index += 1) {
        if (queue.leave(entries[(index * 7919) % waiting])) taken += 1;
        if (queue.dequeue() !== undefined) taken += 1;
        queue.enqueue(entryOf(`late-${index}`));
        operations += 3;
      }
      // Every operation did what it says: the queue holds exactly what came in and was not taken.
      expect(queue.size).toBe(waiting + 1000 - taken);
      expect(queue.size).toBeGreaterThan(waiting - 2100);
      return (queue.comparisons - before) / operations;
    };
    const small = costPerOperation(100);
    const large = costPerOperation(10_000);
    // A binary heap: at most about 2 log2(n) comparisons per operation.
    expect(large).toBeLessThan(2 * Math.log2(10_000) + 2);
    // 100 times the requests cost about twice the comparisons (log), nowhere near 100 times (linear).
    expect(large / small).toBeLessThan(3);
    // One tenant with 10,000 waiting: its own list is first-in-first-out, no comparison at all.
    const one = new FairQueue();
    for (let index = 0; index < 10_000; index += 1) one.enqueue(entryOf('only'));
    for (let index = 0; index < 10_000; index += 1) one.dequeue();
    expect(one.comparisons).toBe(0);
  });
});
