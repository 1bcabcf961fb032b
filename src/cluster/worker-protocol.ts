/** The primary's answer to a worker's `hello`: what to serve. */
export interface WorkerHello {
  /** The configuration the other workers run, as plain JSON (the worker validates it again). */
  config: unknown;
  /** Where it came from, for messages. */
  origin: string;
  /** Its version: bumped by each applied reload. */
  version: number;
}

/** A worker's word that it listens: the port (the one the cluster shares) and the version it runs. */
export interface WorkerReady {
  port: number;
  version: number;
}

/** The primary's answer to a `reserve`: whether the ticket holds a slot already (else it is queued). */
export interface ReserveAnswer {
  admitted: boolean;
}
