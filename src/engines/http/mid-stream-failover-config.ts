import { IsBoolean, IsInt, Max, Min } from 'class-validator';

/**
 * Mid-stream failover of an HTTP model: an answer whose replica fails after output began (the
 * connection reset or closed before the finish, an error status or in-band error, silence past
 * `stallTimeoutMs`) goes on from where it stopped on another replica, in the same client stream.
 */
export class MidStreamFailoverConfig {
  /** On by default: a client wants its answer, not an error halfway through it. */
  @IsBoolean()
  enabled: boolean = true;

  /** Continuations one answer may take; past it, the next failure ends the answer in-band. */
  @IsInt()
  @Min(0)
  @Max(10)
  maxResumes: number = 2;

  /**
   * Time without progress (a token, a tool-call piece, a usage count that grew; not bytes, not SSE
   * comments) after the answer's first output that counts as a failure; 0: not watched. A silent
   * prefill is `bodyTimeoutMs`'s concern. Why 15 s: docs/engines.md#mid-stream-failover.
   */
  @IsInt()
  @Min(0)
  stallTimeoutMs: number = 15_000;
}
