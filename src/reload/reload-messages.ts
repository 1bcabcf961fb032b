import type { ModelChanges } from '../models/model-registry.js';

/**
 * The log line of a reload that was applied: which models it added, changed and removed, and the
 * other changed keys it applied (`liveKeys`: paths, never values).
 */
export function reloadedMessage(
  origin: string,
  changes: ModelChanges,
  where = '',
  liveKeys: readonly string[] = [],
): string {
  const parts = (
    [
      ['added', changes.added],
      ['changed', changes.changed],
      ['removed', changes.removed],
    ] as const
  )
    .filter(([, names]) => names.length > 0)
    .map(([what, names]) => `${what} ${names.join(', ')}`);
  const applied = liveKeys.length > 0 ? ` Also applied: ${liveKeys.join(', ')}.` : '';
  return `Configuration reloaded from ${origin}${where}: ${parts.length > 0 ? `models ${parts.join('; ')}` : 'no model changed'}.${applied}`;
}

/** The warning for changed keys that a running gateway does not apply. Names keys, never values. */
export function restartWarning(keys: readonly string[]): string {
  return `These changed keys take effect only after a restart, and keep their running values until then: ${keys.join(', ')}.`;
}

/** The error line of a refused reload; `reason` is the refusal (a ConfigError's message, as at start). */
export function refusedMessage(reason: string): string {
  return `Configuration reload refused; the running configuration stays. ${reason}`;
}

/** The warning before a file that looked half-written is read again; `reason` is what it looked like. */
export function unfinishedMessage(file: string, reason: string, delayMs: number): string {
  return `Configuration file ${file} looks unfinished (${reason}); reading it again in ${delayMs} ms. The running configuration serves meanwhile.`;
}
