import { request } from 'undici';
import { engineGaugesOf } from './engine-gauges.js';
import type { FleetLoad } from './replica-load.js';
import type { Replica } from './replica-pool.js';

/** A reading larger than this is not a metrics page: given up on, counted as a failure. */
const MAX_EXPOSITION_BYTES = 8 * 1024 * 1024;

export interface ScrapeOptions {
  /** The metrics route from each replica's origin. */
  path: string;
  /** The mean wait between two readings of one replica. */
  intervalMs: number;
  /** A reading not answered within this is given up (counted as a failure). */
  timeoutMs: number;
  headers: Record<string, string>;
  /** For the jitter; injected by tests. */
  random?: () => number;
}

/**
 * The wait before a replica's next reading: uniform from 0.5 to 1.5 times the interval (mean: the
 * interval), so that gateways sharing a fleet drift out of step (docs/engines.md#saturation).
 */
export function jitteredWaitMs(intervalMs: number, random: () => number): number {
  return intervalMs * (0.5 + random());
}

/**
 * Reads each replica's Prometheus metrics into the fleet's load, each replica on its own loop, so
 * a slow or silent one delays only its own readings and routing never waits for any (it reads the
 * latest figures). Each wait is drawn uniformly from 0.5 to 1.5 times `intervalMs`: gateways that
 * share a fleet and started together do not read in step, which would let the one that reads
 * first take every slot that frees (docs/engines.md#saturation). `stop()` clears every timer.
 */
export class MetricsScraper {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly aborts = new Set<AbortController>();
  private stopped = false;
  private readonly random: () => number;

  constructor(
    private readonly replicas: readonly Replica[],
    private readonly load: FleetLoad,
    private readonly options: ScrapeOptions,
  ) {
    this.random = options.random ?? Math.random;
  }

  start(): void {
    // The first readings at once, so a starting gateway knows its fleet within one request's time.
    for (const replica of this.replicas) void this.loop(replica);
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    for (const abort of this.aborts) abort.abort();
  }

  private async loop(replica: Replica): Promise<void> {
    if (this.stopped) return;
    await this.read(replica);
    if (this.stopped) return;
    const waitMs = jitteredWaitMs(this.options.intervalMs, this.random);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.loop(replica);
    }, waitMs);
    timer.unref();
    this.timers.add(timer);
  }

  /** One reading; never throws (a failure is counted, and the replica's figures go stale). */
  private async read(replica: Replica): Promise<void> {
    const sentMark = this.load.of(replica).sent;
    const abort = new AbortController();
    this.aborts.add(abort);
    const timer = setTimeout(() => abort.abort(), this.options.timeoutMs);
    try {
      const response = await request(new URL(this.options.path, new URL(replica.url).origin), {
        method: 'GET',
        headers: { accept: 'text/plain', ...this.options.headers },
        signal: abort.signal,
      });
      if (response.statusCode !== 200) {
        await response.body.dump();
        throw new Error(`status ${response.statusCode}`);
      }
      let text = '';
      for await (const piece of response.body) {
        text += (piece as Buffer).toString('utf8');
        if (text.length > MAX_EXPOSITION_BYTES) throw new Error('exposition too large');
      }
      if (this.stopped) return;
      this.load.record(replica, engineGaugesOf(text), sentMark);
    } catch {
      if (!this.stopped) this.load.recordFailure(replica);
    } finally {
      clearTimeout(timer);
      this.aborts.delete(abort);
    }
  }
}
