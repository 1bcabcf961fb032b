import { describe, expect, it } from 'vitest';
import { interleave } from './interleave.js';
import { addTallies, cpuCostOf, emptyTally, machineBusySeconds, type Tally } from './load-tally.js';

describe('interleave', () => {
  it('lets the targets take turns, round after round, and groups the results by target', async () => {
    const order: string[] = [];
    const results = await interleave(['a', 'b', 'c'], 2, async (target) => {
      order.push(target);
      return `${target}${order.length}`;
    });
    expect(order).toEqual(['a', 'b', 'c', 'a', 'b', 'c']);
    expect(results).toEqual([
      ['a1', 'a4'],
      ['b2', 'b5'],
      ['c3', 'c6'],
    ]);
  });
});

describe('tallies', () => {
  const round = (units: number, gatewayCpuSeconds: number): Tally => ({
    ...emptyTally(),
    windowMs: 1000,
    units,
    requests: 2,
    gatewayCpuSeconds,
    upstreamCpuSeconds: 0.25,
    clientCpuSeconds: 0.25,
    machineCpuSeconds: 1.7,
    failures: { timeout: 1 },
  });

  it('add up, and the figures come from the sums', () => {
    const sum = addTallies([round(100_000, 0.9), round(50_000, 0.6)]);
    expect(sum).toMatchObject({
      windowMs: 2000,
      units: 150_000,
      requests: 4,
      gatewayCpuSeconds: 1.5,
      failures: { timeout: 2 },
    });
    const cost = cpuCostOf(sum);
    expect(cost.gatewayMicrosPerUnit).toBeCloseTo(10);
    expect(cost.gatewayCores).toBeCloseTo(0.75);
    expect(cost.upstreamMicrosPerUnit).toBeCloseTo(3.33, 2);
    // 3.4 s busy in 2 s, of which 1.5 + 0.5 + 0.5 s were ours.
    expect(cost.backgroundCores).toBeCloseTo(0.45);
  });

  it('leave the gateway figures out when no gateway was watched (direct runs)', () => {
    const cost = cpuCostOf({ ...round(10, 0), gatewayCpuSeconds: undefined });
    expect(cost.gatewayMicrosPerUnit).toBeUndefined();
    expect(cost.gatewayCores).toBeUndefined();
  });

  it('reads the machine busy time from the cpu line of /proc/stat', () => {
    const stat = 'cpu  1000 20 300 50000 40 5 6 7 0 0\ncpu0 500 10 150 25000 20 2 3 3 0 0\n';
    expect(machineBusySeconds(stat)).toBeCloseTo((1000 + 20 + 300 + 5 + 6 + 7) / 100);
  });
});
