import type { StoredEvent } from '../stored-responses/response-store.js';
import type { WireError } from './ipc-channel.js';
import type { ModelChanges } from '../models/model-registry.js';

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

/** A worker's word that its configuration was refused (a ConfigError's message): the primary knows no engine kind. */
export interface WorkerRefusal {
  message: string;
}

/** A worker's answer to a `reload`: the models it changed, or why it refused the configuration. */
export type WorkerReload = { changes: ModelChanges } | { refused: string };

/** The primary's answer to a `reserve`: whether the ticket holds a slot already (else it is queued). */
export interface ReserveAnswer {
  admitted: boolean;
}

/** Events of a followed log, primary to worker: those of one turn in one message. */
export interface StoredEventsMessage {
  subscription: number;
  events: StoredEvent[];
}

/** The end of a worker's subscription to the primary's store: a follower's log ended (or failed), or a cancel came. */
export interface SubscriptionEnd {
  subscription: number;
  error?: WireError;
}
