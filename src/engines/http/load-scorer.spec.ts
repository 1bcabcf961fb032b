import { describe, expect, it } from 'vitest';
import { LoadAwareWeightsConfig } from './engine-metrics-config.js';
import { chooseReplica, fleetHasRoom, hasRoom, loadScore, type ReplicaFigures } from './load-scorer.js';

const WEIGHTS = { ...new LoadAwareWeightsConfig() };

const replica = (more: Partial<ReplicaFigures> = {}): ReplicaFigures => ({
  eligible: true,
  gauges: { waitingRequests: 0, runningRequests: 0, kvCacheUsage: 0 },
  sentSinceScrape: 0,
  outstanding: 0,
  holdsPrefix: false,
  ...more,
});

describe('the load-aware scorer', () => {
  it("avoids the replica swamped by traffic Gantry did not send, whatever Gantry's own counts say", () => {
    const fleet = [
      replica({ gauges: { waitingRequests: 12, runningRequests: 4, kvCacheUsage: 1 }, outstanding: 0 }),
      replica({ gauges: { waitingRequests: 0, runningRequests: 2, kvCacheUsage: 0.5 }, outstanding: 2 }),
      replica({ gauges: { waitingRequests: 0, runningRequests: 3, kvCacheUsage: 0.75 }, outstanding: 3 }),
    ];
    expect(chooseReplica(fleet, WEIGHTS)).toBe(1);
  });

  it('counts the requests sent since the last reading, so a burst between two readings spreads', () => {
    const idle = () => replica({ gauges: { waitingRequests: 0, runningRequests: 0, kvCacheUsage: 0 } });
    const fleet = [idle(), idle(), idle()];
    const chosen: number[] = [];
    for (let index = 0; index < 6; index += 1) {
      const choice = chooseReplica(fleet, WEIGHTS)!;
      fleet[choice] = { ...fleet[choice], sentSinceScrape: fleet[choice].sentSinceScrape + 1 };
      chosen.push(choice);
    }
    expect(chosen.toSorted((a, b) => a - b)).toEqual([0, 0, 1, 1, 2, 2]);
  });

  it('gives the prefix a bounded worth: the holder wins while it is at most that many waiting requests behind', () => {
    const fleet = (holderWaiting: number) => [
      replica({ gauges: { waitingRequests: holderWaiting, runningRequests: 4 }, holdsPrefix: true }),
      replica({ gauges: { waitingRequests: 0, runningRequests: 4 } }),
    ];
    expect(chooseReplica(fleet(0), WEIGHTS)).toBe(0);
    expect(chooseReplica(fleet(1), WEIGHTS)).toBe(0);
    // prefixAffinity 2: two waiting requests tie (the first from the start wins), three do not.
    expect(chooseReplica(fleet(3), WEIGHTS)).toBe(1);
    expect(chooseReplica(fleet(30), WEIGHTS)).toBe(1);
  });

  it("judges a replica without a fresh reading by Gantry's own requests in flight", () => {
    expect(loadScore(replica({ gauges: undefined, outstanding: 8 }), WEIGHTS)).toBe(8);
    const fleet = [
      replica({ gauges: undefined, outstanding: 3 }),
      replica({ gauges: { waitingRequests: 3, runningRequests: 4 } }),
    ];
    expect(chooseReplica(fleet, WEIGHTS)).toBe(0);
  });

  it('never picks an ineligible replica (down, ejected, or already tried); none eligible: no choice', () => {
    const fleet = [replica({ eligible: false }), replica({ gauges: { waitingRequests: 50 } })];
    expect(chooseReplica(fleet, WEIGHTS)).toBe(1);
    expect(chooseReplica([replica({ eligible: false })], WEIGHTS)).toBeUndefined();
  });

  it('takes turns between equal replicas from where the caller starts', () => {
    const fleet = [replica(), replica(), replica()];
    expect([0, 1, 2].map((startAt) => chooseReplica(fleet, WEIGHTS, { startAt }))).toEqual([0, 1, 2]);
  });

  it('reads the weights from the configuration: with the KV weight raised, a full cache outweighs a queue', () => {
    const fleet = [
      replica({ gauges: { waitingRequests: 4, runningRequests: 2, kvCacheUsage: 0.1 } }),
      replica({ gauges: { waitingRequests: 0, runningRequests: 2, kvCacheUsage: 0.95 } }),
    ];
    expect(chooseReplica(fleet, WEIGHTS)).toBe(1);
    expect(chooseReplica(fleet, { ...WEIGHTS, kvCacheUsage: 10 })).toBe(0);
  });

  it('under saturation prefers a replica with room over the prefix holder without', () => {
    const fleet = [
      replica({ gauges: { waitingRequests: 1, runningRequests: 2 }, holdsPrefix: true }),
      replica({ gauges: { waitingRequests: 0, runningRequests: 2 } }),
    ];
    expect(chooseReplica(fleet, WEIGHTS)).toBe(0);
    expect(chooseReplica(fleet, WEIGHTS, { saturation: { waitingRequests: 1 } })).toBe(1);
  });
});

describe('saturation: whether a replica, and a fleet, has room', () => {
  it("has no room at or past either threshold, counting Gantry's sends since the reading as waiting", () => {
    const thresholds = { waitingRequests: 2, kvCacheUsage: 0.9 };
    expect(hasRoom(replica({ gauges: { waitingRequests: 1 } }), thresholds)).toBe(true);
    expect(hasRoom(replica({ gauges: { waitingRequests: 2 } }), thresholds)).toBe(false);
    expect(hasRoom(replica({ gauges: { waitingRequests: 1 }, sentSinceScrape: 1 }), thresholds)).toBe(false);
    expect(hasRoom(replica({ gauges: { waitingRequests: 0, kvCacheUsage: 0.9 } }), thresholds)).toBe(false);
    expect(hasRoom(replica({ gauges: { waitingRequests: 0, kvCacheUsage: 0.89 } }), thresholds)).toBe(true);
    // Only the thresholds that are set count.
    expect(hasRoom(replica({ gauges: { waitingRequests: 50, kvCacheUsage: 0.5 } }), { kvCacheUsage: 0.9 })).toBe(true);
  });

  it('holds on evidence only: a replica without a fresh reading has room, an ineligible one has none', () => {
    expect(hasRoom(replica({ gauges: undefined, outstanding: 40 }), { waitingRequests: 1 })).toBe(true);
    expect(hasRoom(replica({ eligible: false }), { waitingRequests: 1 })).toBe(false);
  });

  it('a fleet has room while one eligible replica has; a fleet with none eligible is not held (it fails at once)', () => {
    const full = replica({ gauges: { waitingRequests: 3 } });
    const free = replica({ gauges: { waitingRequests: 0 } });
    expect(fleetHasRoom([full, full], { waitingRequests: 1 })).toBe(false);
    expect(fleetHasRoom([full, free], { waitingRequests: 1 })).toBe(true);
    expect(fleetHasRoom([{ ...free, eligible: false }, full], { waitingRequests: 1 })).toBe(false);
    expect(fleetHasRoom([{ ...free, eligible: false }], { waitingRequests: 1 })).toBe(true);
  });

  it('releases at most the room a reading showed: each send between two readings uses one place', () => {
    const fleet = [replica({ gauges: { waitingRequests: 1 } }), replica({ gauges: { waitingRequests: 2 } })];
    let released = 0;
    while (fleetHasRoom(fleet, { waitingRequests: 4 })) {
      const choice = chooseReplica(fleet, WEIGHTS, { saturation: { waitingRequests: 4 } })!;
      fleet[choice] = { ...fleet[choice], sentSinceScrape: fleet[choice].sentSinceScrape + 1 };
      released += 1;
    }
    expect(released).toBe(3 + 2);
  });
});
