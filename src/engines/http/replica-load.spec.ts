import { describe, expect, it } from 'vitest';
import { FleetLoad } from './replica-load.js';
import { Replica } from './replica-pool.js';

describe('FleetLoad: readings and the sends since', () => {
  it('counts the sends made after a reading left as sent since it, and drops a stale reading', () => {
    let now = 1_000;
    const replica = new Replica('http://a:8000/v1');
    const load = new FleetLoad([replica], 500, () => now);
    let readings = 0;
    load.onReading(() => (readings += 1));
    load.countSend(replica);
    load.countSend(replica);
    // A reading whose request left after the first send: it saw that one, not the second.
    load.record(replica, { waitingRequests: 3 }, 1);
    expect(load.view(replica)).toEqual({ gauges: { waitingRequests: 3 }, sentSinceScrape: 1 });
    load.countSend(replica);
    expect(load.view(replica).sentSinceScrape).toBe(2);
    expect(readings).toBe(1);
    now += 501;
    // Stale: judged as a replica without metrics, its sends still counted.
    expect(load.view(replica)).toEqual({ sentSinceScrape: 2 });
    load.recordFailure(replica);
    expect(load.of(replica).scrapeFailures).toBe(1);
  });
});
