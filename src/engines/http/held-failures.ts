import type { Logger } from '@nestjs/common';
import type { Replica } from './replica-pool.js';
import type { UpstreamError } from './upstream-error.js';

/** An error status a request met on one replica before any output, not yet counted against it. */
export interface HeldFailure {
  replica: Replica;
  error: UpstreamError;
}

/**
 * Error statuses a request met before any output, judged once it is known whose they are. Another
 * replica took the prompt (`served`): each counts against its replica. Every replica tried
 * answered the same status: the prompt is the likelier cause (llama.cpp and Ollama answer 5xx on
 * template and input errors), and none counts, so one poison prompt cannot eject the fleet. With
 * one replica tried, or statuses that differ, there is nothing to tell them apart: each counts.
 */
export class HeldFailureJudge {
  /** Requests failed alike on every replica they tried, since the last log line about them. */
  private poisonRequests = 0;
  private poisonNotedAt = 0;

  constructor(
    private readonly model: string,
    private readonly logger: Logger,
    private readonly recordFailure: (replica: Replica, error: UpstreamError) => void,
  ) {}

  judge(held: HeldFailure[], served: boolean): void {
    if (held.length === 0) return;
    const poison = !served && held.length > 1 && held.every(({ error }) => error.status === held[0].error.status);
    if (!poison) {
      for (const { replica, error } of held) this.recordFailure(replica, error);
      return;
    }
    // At most one line a minute: a client may send such a prompt many times a second.
    this.poisonRequests += 1;
    const now = Date.now();
    if (now - this.poisonNotedAt < 60_000) return;
    this.poisonNotedAt = now;
    this.logger.warn(
      `Model '${this.model}': ${this.poisonRequests} request(s) failed with the same status (the latest ${held[0].error.status}) on each of the replicas they tried, before any output; not counted towards their ejection (the requests' own failures).`,
    );
    this.poisonRequests = 0;
  }
}
