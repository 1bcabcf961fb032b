import type { ClientEvent, ClientTimings, ClientUsage } from './client-event.js';
import { isVisibleOutput } from './client-event.js';

/**
 * Measures one answer from the events it sees and the clock: time to first output, arrival times,
 * the latest usage and timings. Times are milliseconds from an arbitrary origin (the clock's).
 */
export class AnswerStats {
  private firstOutputAt?: number;
  private lastOutputAt?: number;
  private outputEvents = 0;
  private usage?: ClientUsage;
  private timings?: ClientTimings;
  heartbeats = 0;

  constructor(readonly startedAt: number) {}

  record(event: ClientEvent, at: number): void {
    if (isVisibleOutput(event)) {
      this.firstOutputAt ??= at;
      this.lastOutputAt = at;
      this.outputEvents += 1;
    } else if (event.type === 'heartbeat') {
      this.heartbeats += 1;
    } else if (event.type === 'usage') {
      this.usage = event.usage;
    } else if (event.type === 'timings') {
      this.timings = event.timings;
    }
  }

  /**
   * Whether the engine is known to have finished prefill: chat's continuous usage reports zero
   * prompt tokens until then, and its timings appear only after it.
   */
  get prefilled(): boolean {
    return this.timings !== undefined || (this.usage?.promptTokens ?? 0) > 0;
  }

  get outputStarted(): boolean {
    return this.firstOutputAt !== undefined;
  }

  /**
   * `prompt 12 tok · completion 48 tok · TTFT 1.23 s · 85.1 tok/s`; parts not known are left out.
   * Speed is the engine's `predicted_per_second` when it reports one, else completion tokens over
   * the time between the first and the last output.
   */
  format(): string {
    const parts: string[] = [];
    // Zeros are what chat's continuous usage reports before prefill ends: nothing known yet.
    if (this.usage && (this.usage.promptTokens > 0 || this.usage.completionTokens > 0)) {
      parts.push(`prompt ${this.usage.promptTokens} tok`, `completion ${this.usage.completionTokens} tok`);
    }
    if (this.firstOutputAt !== undefined)
      parts.push(`TTFT ${((this.firstOutputAt - this.startedAt) / 1000).toFixed(2)} s`);
    const speed = this.tokensPerSecond();
    if (speed !== undefined) parts.push(`${speed.toFixed(1)} tok/s`);
    return parts.join(' · ');
  }

  private tokensPerSecond(): number | undefined {
    const reported = this.timings?.predicted_per_second;
    if (reported !== undefined && Number.isFinite(reported) && reported > 0) return reported;
    if (this.firstOutputAt === undefined || this.lastOutputAt === undefined) return undefined;
    const tokens = this.usage?.completionTokens ?? this.outputEvents;
    const seconds = (this.lastOutputAt - this.firstOutputAt) / 1000;
    return tokens > 1 && seconds > 0 ? (tokens - 1) / seconds : undefined;
  }
}
