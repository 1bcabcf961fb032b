/**
 * What the client knows while it waits for the first output:
 * - `connecting`: the request is sent, the stream has not opened yet;
 * - `queued`: the API said so (Responses `response.queued`);
 * - `prefilling`: the stream opened (Gantry opens it at admission), no sign of prefill's end yet;
 *   the queue wait is included, since Chat and Messages do not tell one from the other;
 * - `generating`: prefill ended (chat's usage or timings say so) but no visible output yet.
 */
export type WaitPhase = 'connecting' | 'queued' | 'prefilling' | 'generating';

const SPINNER = '⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏';

export interface StatusSnapshot {
  phase: WaitPhase;
  /** Redraws so far: picks the spinner frame. */
  frame: number;
  heartbeats: number;
  /** Whether a heartbeat arrived just now: the heart is drawn bright, else dim. */
  beatFresh: boolean;
  elapsedMs: number;
}

/** `⠋ prefilling… ♥ 7 heartbeats · 3.2 s`; the heart appears with the first heartbeat. */
export function formatStatusLine(
  status: StatusSnapshot,
  style: { dim(text: string): string; red(text: string): string },
): string {
  const spinner = SPINNER[status.frame % SPINNER.length];
  const seconds = `${(status.elapsedMs / 1000).toFixed(1)} s`;
  if (status.heartbeats === 0) return `${spinner} ${status.phase}… ${style.dim(`· ${seconds}`)}`;
  const heart = status.beatFresh ? style.red('♥') : style.dim('♥');
  const count = `${status.heartbeats} heartbeat${status.heartbeats === 1 ? '' : 's'}`;
  return `${spinner} ${status.phase}… ${heart} ${style.dim(`${count} · ${seconds}`)}`;
}
