import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { config } from 'rxjs';
import { describeError } from './hook-failures.js';
import { ThrottledWarning } from './logging/throttled-warning.js';
import { GantryMetrics } from './metrics/gantry-metrics.js';

type Listener = (error: unknown) => void;

/** The gateways of this process that take RxJS's unhandled errors (tests run several). */
const listeners = new Set<Listener>();
/** What `config.onUnhandledError` held before the first gateway took it, given back after the last. */
let before: ((error: unknown) => void) | null = null;

function deliver(error: unknown): void {
  for (const listener of listeners) listener(error);
}

/**
 * Takes RxJS's unhandled errors (an error thrown by a subscriber's callback, which RxJS would
 * otherwise rethrow on a timer and so end the process) through RxJS's public hook,
 * `config.onUnhandledError`, until the returned function is called.
 */
export function takeUnhandledStreamErrors(listener: Listener): () => void {
  if (listeners.size === 0) {
    before = config.onUnhandledError;
    config.onUnhandledError = deliver;
  }
  listeners.add(listener);
  return () => {
    if (!listeners.delete(listener) || listeners.size > 0) return;
    if (config.onUnhandledError === deliver) config.onUnhandledError = before;
    before = null;
  };
}

/**
 * A gateway's handler of RxJS's unhandled errors: counted in `gantry_unhandled_stream_errors_total`
 * and logged at most once per interval, while the gateway runs; the process goes on.
 */
@Injectable()
export class UnhandledStreamErrors implements OnModuleInit, OnModuleDestroy {
  private readonly warning = new ThrottledWarning((message) => new Logger('Gantry').error(message));
  private release?: () => void;

  constructor(@Inject(GantryMetrics) private readonly metrics: GantryMetrics) {}

  onModuleInit(): void {
    this.release = takeUnhandledStreamErrors((error) => this.handle(error));
  }

  onModuleDestroy(): void {
    this.release?.();
  }

  private handle(error: unknown): void {
    this.metrics.unhandledStreamErrors.inc();
    this.warning.failure(
      (more) =>
        `A stream's subscriber threw and no one could take the error (${describeError(error)}); the process goes on, and gantry_unhandled_stream_errors_total counts each${more}.`,
    );
  }
}
