/** How a contended model's queue orders its requests: fair between tenants (the default), or first come, first served. */
export type QueueOrder = 'fair' | 'fifo';

/**
 * What decides a request's place in a contended model's queue. Plain data: with workers it
 * travels to the primary, whose queue decides for the whole instance.
 */
export interface AdmissionClaim {
  /** Requests of one tenant share its service: a named key's name, `default` for keys without one. */
  tenant: string;
  /** The tenant's share relative to the other tenants of its priority. */
  weight: number;
  /** Strict: any waiting request of a higher priority is admitted first. */
  priority: number;
  /** A background run: admitted after its tenant's interactive requests. */
  background: boolean;
  /** The prompt's tokens, estimated at acceptance: part of what admission charges the tenant. */
  promptTokens: number;
  /** The request's output ceiling, if any: it bounds the output estimate. */
  maxTokens?: number;
  /**
   * The tokens the engine reported, written by the request as they come; read when its place is
   * given back, to charge the tenant what it really used.
   */
  served?: { promptTokens: number; completionTokens: number };
}

/** The claim of a request that names none (an open gateway's, a test's). */
export function defaultClaim(): AdmissionClaim {
  return { tenant: 'default', weight: 1, priority: 0, background: false, promptTokens: 0 };
}
