import { EngineError } from '../../engine/engine-error.js';
import type { UpstreamError } from './upstream-error.js';

/** The error of a request no replica could serve: every one down, or every one tried failed. */
export function exhaustedError(
  model: string,
  total: number,
  triedCount: number,
  lastError: UpstreamError | undefined,
): EngineError | UpstreamError {
  if (!lastError) {
    return new EngineError(
      'unavailable',
      `All ${total} replica${total === 1 ? '' : 's'} of model '${model}' are down (failing health checks or ejected after errors).`,
      { code: 'upstream_unavailable' },
    );
  }
  if (total === 1) return lastError;
  // lastError's message is safe to repeat: only retryable errors get here, and they never quote the upstream.
  return new EngineError(
    'unavailable',
    `All replicas of model '${model}' failed or are down (${triedCount} of ${total} tried); the last error: ${lastError.message}`,
    { code: 'upstream_unavailable', cause: lastError },
  );
}
