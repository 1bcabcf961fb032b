/**
 * An engine with more to show on `/ready` than whether it can take requests (the HTTP engine: its
 * replicas). Optional, so the port itself names no replica.
 */
export interface ReadinessDetails {
  readinessDetails(): Record<string, unknown>;
}

export function hasReadinessDetails(engine: object): engine is ReadinessDetails {
  return typeof (engine as Partial<ReadinessDetails>).readinessDetails === 'function';
}
