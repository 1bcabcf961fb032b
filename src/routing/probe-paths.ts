/** Liveness and readiness probes: orchestrators call them, usually without credentials. */
const PROBE_PATHS = new Set(['/health', '/ready']);
const METRICS_PATH = '/metrics';

/** The path of a request URL, without its query string. */
export function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

export function isProbePath(path: string): boolean {
  return PROBE_PATHS.has(path);
}

export function isMetricsPath(path: string): boolean {
  return path === METRICS_PATH;
}
