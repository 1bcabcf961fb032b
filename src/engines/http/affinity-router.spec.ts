import { describe, expect, it } from 'vitest';
import { AffinityRouter, ringIdOf } from './affinity-router.js';
import { ringPosition } from './hash-ring.js';
import { Replica } from './replica-pool.js';

const URLS = [
  'http://10.0.0.1:8000/v1',
  'http://10.0.0.2:8000/v1',
  'http://10.0.0.3:8000/v1',
  'http://10.0.0.4:8000/v1',
];
const KEYS = Array.from({ length: 400 }, (_, index) => ringPosition(`conversation ${index}`));

function fleet(loadFactor = 1.25, urls = URLS) {
  const clock = { now: 0 };
  const replicas = urls.map((url) => new Replica(url));
  return { replicas, clock, router: new AffinityRouter(replicas, loadFactor, () => clock.now) };
}

/** The replicas in the key's ring order (each tried in turn while the earlier ones are excluded). */
function ringOrder(router: AffinityRouter, key: number): Replica[] {
  const order: Replica[] = [];
  for (let replica = router.pick(key); replica; replica = router.pick(key, new Set(order))) order.push(replica);
  return order;
}

describe('AffinityRouter', () => {
  it('sends the same key to the same replica, and different keys over the whole fleet', () => {
    const { router, replicas } = fleet();
    const chosen = KEYS.map((key) => router.pick(key));
    expect(KEYS.map((key) => router.pick(key))).toEqual(chosen);
    for (const replica of replicas)
      expect(chosen.filter((one) => one === replica).length).toBeGreaterThan(KEYS.length / 8);
  });

  it('makes the same choices in every process with the same fleet, whatever the order or form of its URLs', () => {
    const urlsOf = (router: AffinityRouter) => KEYS.map((key) => ringIdOf(router.pick(key)!.url));
    const listed = fleet().router;
    const reordered = fleet(1.25, [URLS[2], URLS[0], `${URLS[3]}/`, URLS[1].replace('//', '//user:secret@')]).router;
    expect(urlsOf(reordered)).toEqual(urlsOf(listed));
  });

  it('passes a request on to the next replica on the ring when its own holds c times the mean or more, and counts the override', () => {
    const { router, replicas } = fleet();
    const [first, second] = ringOrder(router, KEYS[0]);
    // Mean with the new request: (2 + 1) / 4; bound ceil(1.25 * 3 / 4) = 1: the first holds 2.
    first.outstanding = 2;
    expect(router.pick(KEYS[0])).toBe(second);
    expect(first.affinityOverrides).toBe(1);
    // Everyone busy, the first no more than the others: bound ceil(1.25 * 9 / 4) = 3 > 2, it keeps the request.
    for (const replica of replicas) replica.outstanding = 2;
    expect(router.pick(KEYS[0])).toBe(first);
    expect(first.affinityOverrides).toBe(1);
    expect(second.affinityOverrides).toBe(0);
  });

  it('bounds every replica by c times the mean while one popular key is placed over and over', () => {
    for (const loadFactor of [1, 1.25, 2]) {
      const { router, replicas } = fleet(loadFactor);
      for (let placed = 0; placed < 100; placed += 1) {
        const replica = router.pick(KEYS[7])!;
        expect(replica.outstanding + 1).toBeLessThanOrEqual(Math.ceil((loadFactor * (placed + 1)) / replicas.length));
        replica.outstanding += 1;
      }
      const loads = replicas.map((replica) => replica.outstanding);
      expect(Math.max(...loads)).toBeLessThanOrEqual(Math.ceil((loadFactor * 100) / replicas.length));
      // Below 4/3, three replicas at the bound cannot hold it all: the fourth takes some too.
      if (loadFactor < 4 / 3) expect(Math.min(...loads)).toBeGreaterThan(0);
    }
  });

  it('keeps more affinity with a larger load factor', () => {
    const overridesWith = (loadFactor: number) => {
      const { router, replicas } = fleet(loadFactor);
      for (let placed = 0; placed < 40; placed += 1) router.pick(KEYS[placed % 2])!.outstanding += 1;
      return replicas.reduce((sum, replica) => sum + replica.affinityOverrides, 0);
    };
    expect(overridesWith(3)).toBeLessThan(overridesWith(1.25));
  });

  it('skips unavailable replicas (health check failing, ejected), then takes the key back', () => {
    const { router, clock } = fleet();
    const [first, second] = ringOrder(router, KEYS[1]);
    first.healthCheck = 'failing';
    expect(router.pick(KEYS[1])).toBe(second);
    first.healthCheck = 'passing';
    first.ejectedUntil = 1000;
    expect(router.pick(KEYS[1])).toBe(second);
    clock.now = 1000;
    expect(router.pick(KEYS[1])).toBe(first);
    // Being down is not an override: nothing was passed on for its load.
    expect(first.affinityOverrides).toBe(0);
  });

  it('moves only the keys of a replica that goes down', () => {
    const { router, replicas } = fleet();
    const before = KEYS.map((key) => router.pick(key));
    replicas[2].healthCheck = 'failing';
    const after = KEYS.map((key) => router.pick(key));
    KEYS.forEach((_, index) => {
      if (before[index] !== replicas[2]) expect(after[index]).toBe(before[index]);
      else expect(after[index]).not.toBe(replicas[2]);
    });
  });

  it('sends a retry to the next replica on the ring, and has none once all were tried', () => {
    const { router, replicas } = fleet();
    const order = ringOrder(router, KEYS[2]);
    expect(new Set(order)).toEqual(new Set(replicas));
    expect(router.pick(KEYS[2], new Set([order[0]]))).toBe(order[1]);
    expect(router.pick(KEYS[2], new Set(order))).toBeUndefined();
  });

  it('takes the first candidate on the ring when every one left is over the bound (only after exclusions)', () => {
    const { router, replicas } = fleet();
    const order = ringOrder(router, KEYS[3]);
    // The first was tried and failed; the others hold 5 each: bound ceil(1.25 * 16 / 4) = 5, all at it.
    for (const replica of order.slice(1)) replica.outstanding = 5;
    expect(router.pick(KEYS[3], new Set([order[0]]))).toBe(order[1]);
    expect(replicas.every((replica) => replica.affinityOverrides === 0)).toBe(true);
  });

  it('has nothing to offer when no replica is available', () => {
    const { router, replicas } = fleet();
    for (const replica of replicas) replica.healthCheck = 'failing';
    expect(router.pick(KEYS[0])).toBeUndefined();
  });
});
