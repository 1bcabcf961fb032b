import { describe, expect, it } from 'vitest';
import { LeaseWatch } from './lease-watch.js';

const LEASE_MS = 3_000;

/** A watch on a clock the test moves. */
function watch() {
  let now = 1_000_000;
  const leases = new LeaseWatch(LEASE_MS, () => now);
  return { leases, advance: (ms: number) => (now += ms), now: () => now };
}

describe('LeaseWatch', () => {
  it('tells a left run once the same lease was seen run out for a whole lease, the store answering all along', () => {
    const { leases, advance, now } = watch();
    const lease = now() + LEASE_MS;
    expect(leases.isLeft('resp_1', lease)).toBe(false);
    advance(LEASE_MS + 1);
    // Run out, but seen so for the first time.
    expect(leases.isLeft('resp_1', lease)).toBe(false);
    advance(LEASE_MS - 1);
    expect(leases.isLeft('resp_1', lease)).toBe(false);
    advance(1);
    expect(leases.isLeft('resp_1', lease)).toBe(true);
  });

  it('says nothing of a lease that ran out during an outage: the first read after it, or one that spans it, proves nothing', () => {
    const { leases, advance, now } = watch();
    const lease = now() + LEASE_MS;
    advance(LEASE_MS + 1);
    expect(leases.isLeft('resp_1', lease)).toBe(false);
    // The store fails for longer than a lease, then answers again.
    leases.failed();
    advance(10 * LEASE_MS);
    expect(leases.isLeft('resp_1', lease)).toBe(false);
    leases.answered();
    expect(leases.isLeft('resp_1', lease)).toBe(false);
    // Its run, alive, renews: nothing was left.
    const renewed = now() + LEASE_MS;
    advance(LEASE_MS);
    expect(leases.isLeft('resp_1', renewed)).toBe(false);
    advance(2 * LEASE_MS);
    expect(leases.isLeft('resp_1', renewed)).toBe(false);
    advance(LEASE_MS);
    expect(leases.isLeft('resp_1', renewed)).toBe(true);
  });

  it('watches each response on its own, and starts again when a lease is renewed', () => {
    const { leases, advance, now } = watch();
    const first = now() - 1;
    expect(leases.isLeft('resp_a', first)).toBe(false);
    expect(leases.isLeft('resp_b', first)).toBe(false);
    advance(LEASE_MS);
    const renewed = now() - 1;
    expect(leases.isLeft('resp_a', renewed)).toBe(false);
    expect(leases.isLeft('resp_b', first)).toBe(true);
  });
});
