import { MetricsExposition } from '../observability/metrics/metrics-exposition.js';
import type { IpcChannel } from './ipc-channel.js';

/** `GET /metrics` in a worker of several: the primary's sum of every worker's series (and its own). */
export class ClusterMetricsExposition extends MetricsExposition {
  constructor(private readonly channel: IpcChannel) {
    super();
  }

  expose(): Promise<string> {
    return this.channel.call<string>('metrics');
  }
}
