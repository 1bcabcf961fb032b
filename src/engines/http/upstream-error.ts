import { STATUS_CODES } from 'node:http';
import type { AnswerResume } from '../../engine/answer-resume.js';
import { EngineError, type EngineErrorKind } from '../../engine/engine-error.js';
import { keepText, type Redact } from './secret-redactor.js';

/** What cut an answer whose output had begun, when another replica may continue it (see AnswerResume). */
export type CutReason = AnswerResume['reason'];

export interface UpstreamErrorTraits {
  /** Another replica may succeed, provided nothing has been emitted downstream yet. */
  retryable: boolean;
  /** The replica misbehaved (not the request): counts towards its ejection. */
  replicaFault: boolean;
  /** Set when another replica may continue an answer this failure cut (see MidStreamFailover); absent: the request's own fault. */
  cut?: CutReason;
  /** The HTTP status of an error answer before the stream. */
  status?: number;
  cause?: unknown;
}

/** An EngineError raised by one upstream attempt, with what the replica pool needs to know about it. */
export class UpstreamError extends EngineError {
  readonly retryable: boolean;
  readonly replicaFault: boolean;
  readonly cut?: CutReason;
  readonly status?: number;

  constructor(kind: EngineErrorKind, message: string, traits: UpstreamErrorTraits) {
    super(kind, message, { cause: traits.cause });
    this.name = 'UpstreamError';
    this.retryable = traits.retryable;
    this.replicaFault = traits.replicaFault;
    this.cut = traits.cut;
    this.status = traits.status;
  }
}

const MAX_MESSAGE_LENGTH = 500;

/**
 * A non-200 answer before the stream. Only an error in the client's own request (see
 * isClientOwn) passes the upstream's message on, with `redact` applied: anything else may quote
 * Gantry's credentials (a 401 echoing the headers) or another request, so its status alone is told.
 */
export function upstreamStatusError(status: number, bodyText: string, redact: Redact = keepText): UpstreamError {
  const detail = messageOfBody(bodyText, redact);
  const message =
    detail && isClientOwn(status, detail)
      ? `The upstream answered ${status}: ${detail}`
      : `The upstream answered ${statusName(status)}.`;
  const retryable = status === 408 || status === 429 || (status >= 500 && status !== 501);
  return new UpstreamError(kindOfStatus(status), message, {
    retryable,
    replicaFault: status === 408 || status >= 500,
    cut: retryable ? 'status' : undefined,
    status,
  });
}

/**
 * An in-band `data: {"error": ...}` frame (vLLM, llama.cpp, TGI, OpenAI). The request failed, not
 * the replica: not retried, not counted against it; an answer it cut may be continued elsewhere,
 * unless its code says the client's request was at fault. Its message is passed on (redacted) only
 * when that code says so, as for a status (see upstreamStatusError).
 */
export function upstreamFrameError(
  payload: { error?: unknown; message?: unknown; code?: unknown; error_type?: unknown },
  redact: Redact = keepText,
): UpstreamError {
  const nested =
    typeof payload.error === 'object' && payload.error !== null
      ? (payload.error as Record<string, unknown>)
      : undefined;
  const text = nested?.message ?? (typeof payload.error === 'string' ? payload.error : payload.message);
  const status = frameStatus(nested?.code ?? payload.code, nested?.type ?? payload.error_type);
  const detail = typeof text === 'string' ? clip(redact(text.trim())) : '';
  const message =
    status !== undefined && detail && isClientOwn(status, detail)
      ? detail
      : `The upstream reported an error${status === undefined ? '' : ` (${statusName(status)})`}.`;
  const kind = status === undefined ? 'upstream' : kindOfStatus(status);
  return new UpstreamError(kind, message, {
    retryable: false,
    replicaFault: false,
    cut: kind === 'invalid_request' ? undefined : 'error',
  });
}

/** A malformed stream (`error`), or one that ended before it finished (`reset`): the replica is broken; another one may not be. */
export function upstreamProtocolError(message: string, cause?: unknown, cut: CutReason = 'error'): UpstreamError {
  return new UpstreamError('upstream', message, { retryable: true, replicaFault: true, cut, cause });
}

/** No progress (output, counters that grow) for `stallTimeoutMs` once the upstream's answer began. */
export function upstreamStallError(stallTimeoutMs: number): UpstreamError {
  return new UpstreamError(
    'timeout',
    `The upstream's answer made no progress for ${stallTimeoutMs} ms in the middle of it (stallTimeoutMs).`,
    {
      retryable: true,
      replicaFault: true,
      cut: 'stall',
    },
  );
}

/**
 * The answer took longer than `answerTimeoutMs` in all (retries and continuations included): the
 * request's limit, not a replica's fault, and not continued elsewhere (that would take longer still).
 */
export function answerTimeoutError(answerTimeoutMs: number): UpstreamError {
  return new UpstreamError('timeout', `The answer took longer than ${answerTimeoutMs} ms in all (answerTimeoutMs).`, {
    retryable: false,
    replicaFault: false,
  });
}

/**
 * An upstream answer past Gantry's limits, refused before it is decoded. A `line` past
 * `maxUpstreamLineBytes` is a malformed stream (the replica's fault; another may continue the
 * answer); an `answer` past `maxUpstreamAnswerBytes` is this answer's size, ended in-band.
 */
export function upstreamOversizeError(what: 'line' | 'answer', limit: number): UpstreamError {
  if (what === 'line')
    return upstreamProtocolError(`The upstream sent an SSE line longer than ${limit} bytes (maxUpstreamLineBytes).`);
  return new UpstreamError(
    'upstream',
    `The upstream's answer was larger than ${limit} bytes (maxUpstreamAnswerBytes).`,
    {
      retryable: false,
      replicaFault: false,
    },
  );
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
  const rawCode = (error as { code?: unknown } | undefined)?.code;
  const code = typeof rawCode === 'string' ? rawCode : '';
  switch (code) {
    case 'ECONNREFUSED':
      return new UpstreamError('upstream', 'The upstream refused the connection.', {
        retryable: true,
        replicaFault: true,
        cut: 'reset',
        cause: error,
      });
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new UpstreamError('upstream', 'The upstream did not accept the connection in time.', {
        retryable: true,
        replicaFault: true,
        cut: 'reset',
        cause: error,
      });
    case 'UND_ERR_HEADERS_TIMEOUT':
      if (whole) {
        return new UpstreamError(
          'timeout',
          `The upstream did not finish the answer within ${timeouts.headersTimeoutMs} ms (headersTimeoutMs).`,
          {
            retryable: false,
            replicaFault: false,
            cause: error,
          },
        );
      }
      return new UpstreamError(
        'timeout',
        `The upstream sent no response headers within ${timeouts.headersTimeoutMs} ms.`,
        {
          retryable: false,
          replicaFault: true,
          cut: 'stall',
          cause: error,
        },
      );
    case 'UND_ERR_BODY_TIMEOUT':
      return new UpstreamError('timeout', `The upstream sent nothing for ${timeouts.bodyTimeoutMs} ms.`, {
        retryable: false,
        replicaFault: true,
        cut: 'stall',
        cause: error,
      });
    case 'UND_ERR_SOCKET':
    case 'ECONNRESET':
    case 'EPIPE':
      return new UpstreamError('upstream', 'The upstream closed the connection before the answer was complete.', {
        retryable: true,
        replicaFault: true,
        cut: 'reset',
        cause: error,
      });
    default:
      return new UpstreamError(
        'upstream',
        `The upstream could not be reached (${code || (error as Error)?.message || 'unknown error'}).`,
        {
          retryable: true,
          replicaFault: true,
          cut: 'reset',
          cause: error,
        },
      );
  }
}

/**
 * Errors in the client's own request, whose upstream message tells the client what to fix: 400,
 * 413, 422, and a 404 that names a model (vLLM's "The model `x` does not exist.").
 */
function isClientOwn(status: number, detail: string): boolean {
  return status === 400 || status === 413 || status === 422 || (status === 404 && /\bmodel\b/i.test(detail));
}

/** `401 Unauthorized`: the status and its standard reason phrase. */
function statusName(status: number): string {
  const reason = STATUS_CODES[status];
  return reason ? `${status} ${reason}` : String(status);
}

/**
 * An error frame's HTTP status: its numeric `code` (vLLM, OpenAI-style), or what its type says:
 * TGI's `error_type: validation` is its 422, OpenAI's `invalid_request_error` and vLLM's
 * `BadRequestError` a 400.
 */
function frameStatus(code: unknown, type: unknown): number | undefined {
  if (typeof code === 'number' && Number.isInteger(code)) return code;
  if (typeof code === 'string' && /^\d{3}$/.test(code)) return Number(code);
  if (type === 'validation') return 422;
  if (type === 'invalid_request_error' || type === 'BadRequestError') return 400;
  return undefined;
}

function kindOfStatus(status: number): EngineErrorKind {
  if (status === 400 || status === 413 || status === 422) return 'invalid_request';
  if (status === 429) return 'overloaded';
  if (status === 408 || status === 504) return 'timeout';
  return 'upstream';
}

/**
 * OpenAI `{error: {message}}`, flat `{message}`, FastAPI `{detail}`, or the text itself; redacted
 * before it is clipped, so that a secret cut at the clip cannot leave its first half behind.
 */
function messageOfBody(text: string, redact: Redact): string {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const error = body.error as Record<string, unknown> | string | undefined;
    const candidate = typeof error === 'string' ? error : (error?.message ?? body.message ?? body.detail);
    if (typeof candidate === 'string') return clip(redact(candidate.trim()));
  } catch {
    // Not JSON: the text is the message.
  }
  return clip(redact(text.trim()));
}

function clip(text: string): string {
  return text.length > MAX_MESSAGE_LENGTH ? `${text.slice(0, MAX_MESSAGE_LENGTH)}…` : text;
}
