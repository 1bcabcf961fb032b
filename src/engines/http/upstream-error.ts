import { EngineError, type EngineErrorKind } from '../../engine/engine-error.js';

export interface UpstreamErrorTraits {
  /** Another replica may succeed, provided nothing has been emitted downstream yet. */
  retryable: boolean;
  /** The replica misbehaved (not the request): counts towards its ejection. */
  replicaFault: boolean;
  cause?: unknown;
}

/** An EngineError raised by one upstream attempt, with what the replica pool needs to know about it. */
export class UpstreamError extends EngineError {
  readonly retryable: boolean;
  readonly replicaFault: boolean;

  constructor(kind: EngineErrorKind, message: string, traits: UpstreamErrorTraits) {
    super(kind, message, { cause: traits.cause });
    this.name = 'UpstreamError';
    this.retryable = traits.retryable;
    this.replicaFault = traits.replicaFault;
  }
}

const MAX_MESSAGE_LENGTH = 500;

/** A non-200 answer before the stream. The upstream's own message is kept: it names the problem. */
export function upstreamStatusError(status: number, bodyText: string): UpstreamError {
  const detail = messageOfBody(bodyText);
  const message = `The upstream answered ${status}${detail ? `: ${detail}` : '.'}`;
  return new UpstreamError(kindOfStatus(status), message, {
    retryable: status === 408 || status === 429 || (status >= 500 && status !== 501),
    replicaFault: status === 408 || status >= 500,
  });
}

/**
 * An in-band `data: {"error": ...}` frame (vLLM, llama.cpp, TGI, OpenAI). The request failed, not
 * the replica: not retried, not counted against it.
 */
export function upstreamFrameError(payload: { error?: unknown; message?: unknown; code?: unknown }): UpstreamError {
  const nested = typeof payload.error === 'object' && payload.error !== null ? (payload.error as Record<string, unknown>) : undefined;
  const text = nested?.message ?? (typeof payload.error === 'string' ? payload.error : payload.message);
  const code = nested?.code ?? payload.code;
  const status = typeof code === 'number' ? code : Number.NaN;
  const message = typeof text === 'string' && text.length > 0 ? clip(text) : 'The upstream reported an error.';
  return new UpstreamError(Number.isNaN(status) ? 'upstream' : kindOfStatus(status), message, {
    retryable: false,
    replicaFault: false,
  });
}

/** A malformed stream: the replica is broken; another one may not be. */
export function upstreamProtocolError(message: string, cause?: unknown): UpstreamError {
  return new UpstreamError('upstream', message, { retryable: true, replicaFault: true, cause });
}

/**
 * Transport failures (undici errors, Node socket errors) to what a client may read. `whole`: the
 * request asked for one JSON answer, whose headers come only once it is generated, so a headers
 * timeout says the generation was long, not that the replica is at fault.
 */
export function upstreamTransportError(
  error: unknown,
  timeouts: { headersTimeoutMs: number; bodyTimeoutMs: number },
  whole = false,
): UpstreamError {
  if (error instanceof UpstreamError) return error;
  const code = String((error as { code?: unknown })?.code ?? '');
  switch (code) {
    case 'ECONNREFUSED':
      return new UpstreamError('upstream', 'The upstream refused the connection.', { retryable: true, replicaFault: true, cause: error });
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new UpstreamError('upstream', 'The upstream did not accept the connection in time.', { retryable: true, replicaFault: true, cause: error });
    case 'UND_ERR_HEADERS_TIMEOUT':
      if (whole) {
        return new UpstreamError('timeout', `The upstream did not finish the answer within ${timeouts.headersTimeoutMs} ms (headersTimeoutMs).`, {
          retryable: false,
          replicaFault: false,
          cause: error,
        });
      }
      return new UpstreamError('timeout', `The upstream sent no response headers within ${timeouts.headersTimeoutMs} ms.`, { retryable: false, replicaFault: true, cause: error });
    case 'UND_ERR_BODY_TIMEOUT':
      return new UpstreamError('timeout', `The upstream sent nothing for ${timeouts.bodyTimeoutMs} ms.`, { retryable: false, replicaFault: true, cause: error });
    case 'UND_ERR_SOCKET':
    case 'ECONNRESET':
    case 'EPIPE':
      return new UpstreamError('upstream', 'The upstream closed the connection before the answer was complete.', { retryable: true, replicaFault: true, cause: error });
    default:
      return new UpstreamError('upstream', `The upstream could not be reached (${code || (error as Error)?.message || 'unknown error'}).`, {
        retryable: true,
        replicaFault: true,
        cause: error,
      });
  }
}

function kindOfStatus(status: number): EngineErrorKind {
  if (status === 400 || status === 413 || status === 422) return 'invalid_request';
  if (status === 429) return 'overloaded';
  if (status === 408 || status === 504) return 'timeout';
  return 'upstream';
}

/** OpenAI `{error: {message}}`, flat `{message}`, FastAPI `{detail}`, or the text itself. */
function messageOfBody(text: string): string {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const error = body.error as Record<string, unknown> | string | undefined;
    const candidate = typeof error === 'string' ? error : (error?.message ?? body.message ?? body.detail);
    if (typeof candidate === 'string') return clip(candidate);
  } catch {
    // Not JSON: the text is the message.
  }
  return clip(text.trim());
}

function clip(text: string): string {
  return text.length > MAX_MESSAGE_LENGTH ? `${text.slice(0, MAX_MESSAGE_LENGTH)}…` : text;
}
