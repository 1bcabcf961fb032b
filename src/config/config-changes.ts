import type { GatewayConfig } from './gateway-config.js';

/**
 * The top-level keys a running gateway applies when its file is re-read (SIGHUP, `--watch-config`):
 * models, their upstreams and limits. Every other key is read once at start (the listening
 * socket, the worker count, auth, plugins, the loggers and tracers built from it), so a change to
 * one waits for a restart and is named in a warning.
 */
export const LIVE_KEYS: ReadonlySet<string> = new Set(['models']);

/** JSON with every object's keys sorted: equal for two values that differ only in key order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.keys(inner).sort().map((key) => [key, (inner as Record<string, unknown>)[key]]))
      : inner,
  );
}

/**
 * The dotted paths whose values differ between two plain values: objects are walked key by key,
 * anything else (arrays included) is compared whole. Paths only, never values (keys are secrets).
 */
export function changedPaths(before: unknown, after: unknown, path = ''): string[] {
  if (isRecord(before) && isRecord(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((key) => changedPaths(before[key], after[key], path ? `${path}.${key}` : key));
  }
  return canonicalJson(before) === canonicalJson(after) ? [] : [path];
}

/** The changed keys of `next` that a running gateway cannot apply (see LIVE_KEYS). */
export function keysNeedingRestart(running: GatewayConfig, next: GatewayConfig): string[] {
  return changedPaths(running, next).filter((path) => !LIVE_KEYS.has(path.split('.')[0]));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
