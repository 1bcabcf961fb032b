import type { ReplicaReport } from '../../engine/replica-report.js';
import type { ResumeCount } from './failover-counters.js';
import type { ReplicaEngineFigures } from './fleet-load-wiring.js';
import type { ResumeFailure } from './mid-stream-failover.js';
import type { ReplicaState, ReplicaTraffic } from './replica-pool.js';

/** What an HTTP engine knows of its fleet, each part as it reports it. */
export interface HttpFleetReadings {
  states: readonly ReplicaState[];
  traffic: readonly ReplicaTraffic[];
  figures: readonly ReplicaEngineFigures[];
  resumes: readonly ResumeCount[];
  resumeFailures: ReadonlyArray<{ reason: ResumeFailure; count: number }>;
}

/** An HTTP model's fleet as the engine port reports it to `/metrics`; replicas go by URL without credentials. */
export function httpReplicaReport(readings: HttpFleetReadings): ReplicaReport {
  const traffic = new Map(readings.traffic.map((replica) => [replica.url, replica]));
  const figures = new Map(readings.figures.map((replica) => [replica.url, replica]));
  return {
    replicas: readings.states.map((state) => {
      const sent = traffic.get(state.url);
      const load = figures.get(state.url);
      return {
        id: state.url,
        healthy: state.healthy,
        inFlight: state.outstanding,
        requests: sent?.requests ?? 0,
        ...(sent?.affinityOverrides === undefined ? {} : { affinityOverrides: sent.affinityOverrides }),
        ...(load && {
          load: {
            waitingRequests: load.waitingRequests,
            runningRequests: load.runningRequests,
            kvCacheUsage: load.kvCacheUsage,
            readFailures: load.scrapeFailures,
          },
        }),
      };
    }),
    resumes: readings.resumes,
    resumeFailures: readings.resumeFailures,
  };
}
