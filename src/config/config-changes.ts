import { AuthConfig, KeyLimitsConfig } from './auth-config.js';
import type { GatewayConfig } from './gateway-config.js';
import { TENANT_LIMIT_FIELDS } from './tenant-config.js';

/**
 * The keys (dotted paths and what lies under them) a running gateway applies when its file is
 * re-read (SIGHUP, `--watch-config`): models, their upstreams and limits; the API keys with their
 * tenants (weights, priorities, models, limits), the limit values and what needs a key. Every
 * other key is read once at start (the listening socket, the worker count, the limit and
 * response stores, plugins, the loggers and tracers built from it), so a change to one waits for a
 * restart and is named in a warning.
 */
export const LIVE_KEYS: readonly string[] = [
  'models',
  'auth.apiKeys',
  'auth.protectHealth',
  'auth.protectMetrics',
  ...TENANT_LIMIT_FIELDS.map((field) => `auth.limits.${field}`),
];

/** JSON with every object's keys sorted: equal for two values that differ only in key order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(
          Object.keys(inner)
            .sort()
            .map((key) => [key, (inner as Record<string, unknown>)[key]]),
        )
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
  return changedPaths(withLimitDefaults(running), withLimitDefaults(next)).filter((path) => !isLive(path));
}

/** The changed keys of `next` that a running gateway applies, besides its models (for the reload's log line). */
export function liveKeysChanged(running: GatewayConfig, next: GatewayConfig): string[] {
  return changedPaths(withLimitDefaults(running), withLimitDefaults(next)).filter(
    (path) => isLive(path) && !path.startsWith('models'),
  );
}

/**
 * Applies the live keys of `next` to the running configuration, in place (the gateway reads it
 * at each request): its models and auth, whose limit stores stay where they were built.
 */
export function applyLiveKeys(running: GatewayConfig, next: GatewayConfig): void {
  running.models = next.models;
  const values =
    next.auth.limits && Object.fromEntries(TENANT_LIMIT_FIELDS.map((field) => [field, next.auth.limits![field]]));
  const limits = values && Object.assign(new KeyLimitsConfig(), running.auth.limits, values);
  running.auth = Object.assign(new AuthConfig(), next.auth, { limits });
}

function isLive(path: string): boolean {
  return LIVE_KEYS.some((live) => path === live || path.startsWith(`${live}.`));
}

/** `auth.limits` absent reads as its defaults: limits appearing (or going) change their values, not their store. */
function withLimitDefaults(config: GatewayConfig): unknown {
  return { ...config, auth: { ...config.auth, limits: config.auth.limits ?? { ...new KeyLimitsConfig() } } };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
