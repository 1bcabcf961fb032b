import type { ResumeFailure } from './mid-stream-failover.js';
import type { CutReason } from './upstream-error.js';

/** Resumes from one replica for one reason, since the engine started. */
export interface ResumeCount {
  /** The replica that failed (its URL without credentials). */
  replica: string;
  reason: CutReason;
  count: number;
}

/** What a model's mid-stream failover did, for `/metrics` (read when scraped, as the replica counters are). */
export class FailoverCounters {
  private readonly resumes = new Map<string, ResumeCount>();
  private readonly failures = new Map<ResumeFailure, number>();

  countResume(replica: string, reason: CutReason): void {
    const key = `${replica}\u0000${reason}`;
    const entry = this.resumes.get(key);
    if (entry) entry.count += 1;
    else this.resumes.set(key, { replica, reason, count: 1 });
  }

  countFailure(reason: ResumeFailure): void {
    this.failures.set(reason, (this.failures.get(reason) ?? 0) + 1);
  }

  resumeCounts(): ResumeCount[] {
    return [...this.resumes.values()].map((entry) => ({ ...entry }));
  }

  failureCounts(): Array<{ reason: ResumeFailure; count: number }> {
    return [...this.failures].map(([reason, count]) => ({ reason, count }));
  }
}
