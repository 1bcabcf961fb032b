/** A keep-alive beat in an engine event stream; each encoder writes its protocol's heartbeat. */
export interface Heartbeat {
  type: 'heartbeat';
  /** Beats sent before this one on the same stream. */
  n: number;
}

export function heartbeat(n: number): Heartbeat {
  return { type: 'heartbeat', n };
}
