import type { ProbeResult } from './health-probe.js';
import type { Replica, ReplicaPool } from './replica-pool.js';
import type { UpstreamConnection } from './upstream-connection.js';

export interface HealthTarget {
  replica: Replica;
  connection: UpstreamConnection;
}

/**
 * Active health checks: one round of probes (see UpstreamConnection.checkHealth) on every replica
 * at once, then again `intervalMs` after the round ends (a slow replica never stacks checks).
 * `stop()` clears the timer, so a closed engine leaves nothing that keeps the process alive.
 */
export class HealthChecker {
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly pool: ReplicaPool,
    private readonly targets: readonly HealthTarget[],
    private readonly intervalMs: number,
    private readonly timeoutMs: number,
    private readonly onChange: (replica: Replica, result: ProbeResult) => void = () => {},
  ) {
    // Trusted until the first check says otherwise, so that a starting gateway serves at once.
    for (const { replica } of targets) replica.healthCheck = 'passing';
  }

  start(): void {
    void this.round();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async round(): Promise<void> {
    await Promise.all(
      this.targets.map(async ({ replica, connection }) => {
        const result = await connection.checkHealth(this.timeoutMs);
        if (this.stopped) return;
        const before = replica.healthCheck;
        this.pool.recordHealthCheck(replica, result.state);
        if (before !== replica.healthCheck) this.onChange(replica, result);
      }),
    );
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.round(), this.intervalMs);
    this.timer.unref();
  }
}
