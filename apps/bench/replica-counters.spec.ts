import { describe, expect, it } from 'vitest';
import { counterDeltas, countersByReplica, maxOverMean } from './replica-counters.js';

const EXPOSITION = `# HELP gantry_upstream_requests_total Requests sent to each upstream replica (retries included).
# TYPE gantry_upstream_requests_total counter
gantry_upstream_requests_total{model="conv-a",replica="http://127.0.0.1:1/v1"} 12
gantry_upstream_requests_total{model="conv-a",replica="http://127.0.0.1:2/v1"} 30
gantry_upstream_requests_total{model="conv-b",replica="http://127.0.0.1:1/v1"} 7
gantry_upstream_requests_total_extra{model="conv-a",replica="http://127.0.0.1:1/v1"} 99
gantry_upstream_affinity_overrides_total{model="conv-a",replica="http://127.0.0.1:1/v1"} 3
`;

describe('replica counters from /metrics', () => {
  it("reads one counter's values for one model, by replica", () => {
    expect(countersByReplica(EXPOSITION, 'gantry_upstream_requests_total', 'conv-a')).toEqual(
      new Map([
        ['http://127.0.0.1:1/v1', 12],
        ['http://127.0.0.1:2/v1', 30],
      ]),
    );
    expect(countersByReplica(EXPOSITION, 'gantry_upstream_affinity_overrides_total', 'conv-b')).toEqual(new Map());
  });

  it('subtracts a scrape taken before, and rates the spread as the largest share over the mean', () => {
    const deltas = counterDeltas(
      new Map([['a', 2]]),
      new Map([
        ['a', 12],
        ['b', 4],
      ]),
    );
    expect(deltas).toEqual(
      new Map([
        ['a', 10],
        ['b', 4],
      ]),
    );
    expect(maxOverMean([10, 10, 10, 10])).toBe(1);
    expect(maxOverMean([20, 10, 5, 5])).toBe(2);
    expect(maxOverMean([0, 0])).toBeUndefined();
  });
});
