import { Logger } from '@nestjs/common';
import type { GenerationHook, HookFailureListener, HookMethod } from './generation-hook.js';
import { ThrottledWarning } from './logging/throttled-warning.js';
import type { GantryMetrics } from './metrics/gantry-metrics.js';

/**
 * Where the exceptions of GenerationHooks go (`GenerationHook.chain`'s listener): each is counted
 * in `gantry_hook_errors_total{hook, method}`, and logged at most once per interval per hook, so a
 * hook that throws on every token neither ends a stream nor floods the log.
 */
export class HookFailures {
  private readonly warnings = new Map<string, ThrottledWarning>();

  constructor(
    private readonly metrics: Pick<GantryMetrics, 'hookErrors'>,
    private readonly warn: (message: string) => void = (message) => new Logger('Gantry').warn(message),
    private readonly intervalMs = 10_000,
  ) {}

  readonly report: HookFailureListener = (hook: GenerationHook, method: HookMethod, error: unknown) => {
    const name = hook.constructor.name;
    this.metrics.hookErrors.inc({ hook: name, method });
    let warning = this.warnings.get(name);
    if (warning === undefined) {
      warning = new ThrottledWarning(this.warn, this.intervalMs);
      this.warnings.set(name, warning);
    }
    warning.failure(
      (more) =>
        `The GenerationHook ${name} threw in ${method} (${describeError(error)}); the request went on, and gantry_hook_errors_total counts each${more}.`,
    );
  };
}

/** An exception's class and message; a thrown non-Error only by its type (its value could be anything). */
export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : `a thrown ${typeof error}`;
}
