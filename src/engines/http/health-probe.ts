/** What the active health check knows of a replica: `off` when checks are disabled. */
export type HealthCheckState = 'passing' | 'failing' | 'unknown' | 'off';

/** One round of probes of one replica. */
export interface ProbeResult {
  state: Exclude<HealthCheckState, 'off'>;
  /** What was asked and how it was answered (paths and statuses only, never the upstream's text). */
  detail: string;
}

/**
 * The paths a replica's health check tries, in order. A configured `healthCheckPath` alone,
 * resolved as a link from the base URL (`/api/tags` from the server's root, `models` under the base
 * URL); otherwise `/health` beside the API prefix (vLLM, SGLang, llama.cpp, TGI), then
 * `{base}/models`, which every OpenAI-compatible server has (Ollama, LM Studio, hosted APIs).
 */
export function healthProbePaths(baseUrl: string, healthCheckPath?: string): string[] {
  const base = new URL(baseUrl);
  const prefix = base.pathname.replace(/\/+$/, '');
  if (healthCheckPath !== undefined) {
    const resolved = new URL(healthCheckPath, `${base.origin}${prefix}/`);
    return [`${resolved.pathname}${resolved.search}`];
  }
  return [`${prefix.replace(/\/v1$/, '')}/health`, `${prefix}/models`];
}

/**
 * What one probe's status says. 2xx: up. 5xx and 408: down. Anything else (404 for a route the
 * server lacks, 401 or 405 where a route is not meant for probes) says nothing of the replica's
 * health: the next path is tried, and a replica no path could vouch for is `unknown` and served,
 * watched by the passive checks alone.
 */
export function judgeProbeStatus(status: number): 'pass' | 'fail' | 'inconclusive' {
  if (status >= 200 && status < 300) return 'pass';
  if (status >= 500 || status === 408) return 'fail';
  return 'inconclusive';
}
