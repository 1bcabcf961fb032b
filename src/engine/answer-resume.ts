/**
 * An answer continued elsewhere after a failure cut it, as an engine reports it beside its events
 * (`GenerationRequest.onResume`): for traces and logs. The client's stream does not show it.
 */
export interface AnswerResume {
  /**
   * What cut the answer: the connection reset or closed before the finish (`reset`), an error
   * status (`status`), an in-band error or a malformed answer (`error`), silence (`stall`).
   */
  reason: 'reset' | 'status' | 'error' | 'stall';
  /** 1 for the answer's first resume, 2 for its second... */
  resume: number;
  /** Output tokens the answer held when it was cut. */
  producedTokens: number;
  /** Where the answer was cut and where it goes on, in the engine's own names (no credentials). */
  from: string;
  to: string;
}
