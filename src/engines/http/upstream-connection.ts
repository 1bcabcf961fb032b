import { Pool } from 'undici';
import { Observable } from 'rxjs';
import { healthProbePaths, judgeProbeStatus, type ProbeResult } from './health-probe.js';
import { keepText, type Redact } from './secret-redactor.js';
import { UpstreamExchange } from './upstream-exchange.js';
import { upstreamContextLengthError } from './upstream-context-error.js';
import { upstreamProtocolError, upstreamStatusError, upstreamTransportError } from './upstream-error.js';

export interface UpstreamTimeouts {
  connectTimeoutMs: number;
  /** 0: no limit. */
  headersTimeoutMs: number;
  /** Longest silence between body reads; 0: no limit. */
  bodyTimeoutMs: number;
}

/** How much of an upstream's answer is read before it is refused (see UpstreamExchange). */
export interface UpstreamLimits {
  /** One SSE line (a streamed answer's event lines). */
  maxUpstreamLineBytes: number;
  /** One answer's whole body. */
  maxUpstreamAnswerBytes: number;
}

export interface UpstreamConnectionOptions {
  /** Absent: no limits. */
  limits?: UpstreamLimits;
  /** The model's `healthCheckPath`; absent: `/health`, then `{base}/models`. */
  healthCheckPath?: string;
  /** Sent with health probes too: hosted APIs answer `/models` only to a key. */
  headers?: Record<string, string>;
  /** Applied to an error answer's message before it may reach a client. */
  redact?: Redact;
}

/**
 * One replica's keep-alive connection pool (undici) and the two calls made on it: the streamed
 * chat completion and the health check.
 *
 * undici's own 300 s body and headers timeouts would cut a long silent prefill, so both are set
 * from the model's configuration on every request.
 */
export class UpstreamConnection {
  private readonly pool: Pool;
  private readonly chatPath: string;
  /** The base URL's path (`/v1`): other routes are under it. */
  private readonly basePath: string;
  private readonly probePaths: string[];
  /** The probe path that answered last: tried first in the next round. */
  private probeStart = 0;
  private readonly probeHeaders: Record<string, string>;
  private readonly redact: Redact;
  private readonly limits: UpstreamLimits;

  constructor(
    baseUrl: string,
    private readonly timeouts: UpstreamTimeouts,
    options: UpstreamConnectionOptions = {},
  ) {
    const url = new URL(baseUrl);
    const prefix = url.pathname.replace(/\/+$/, '');
    this.chatPath = `${prefix}/chat/completions`;
    this.basePath = prefix;
    this.probePaths = healthProbePaths(baseUrl, options.healthCheckPath);
    this.probeHeaders = options.headers ?? {};
    this.redact = options.redact ?? keepText;
    this.limits = options.limits ?? { maxUpstreamLineBytes: Infinity, maxUpstreamAnswerBytes: Infinity };
    this.pool = new Pool(url.origin, {
      connect: { timeout: timeouts.connectTimeoutMs },
      headersTimeout: timeouts.headersTimeoutMs,
      bodyTimeout: timeouts.bodyTimeoutMs,
    });
  }

  /**
   * POSTs a chat completion (`whole`: asking for one JSON answer, else for a stream) and emits the response body as text pieces, one per socket read, as it arrives: each piece is handed on synchronously from the read, so that everything one read
   * holds is decoded, encoded and written downstream as one batch. Unsubscribing before the body
   * ended aborts the request, which closes its socket, which is how vLLM learns to abort the
   * generation. A non-200 status, a timeout or a broken connection errors with an UpstreamError;
   * a 200's headers call `onAccepted` before any body.
   */
  postChat(
    body: string,
    headers: Record<string, string>,
    whole: boolean,
    onAccepted?: () => void,
    route: 'chat/completions' | 'completions' = 'chat/completions',
  ): Observable<string> {
    return new Observable<string>((subscriber) => {
      const exchange = new UpstreamExchange(subscriber, this.timeouts, whole, this.redact, onAccepted, this.limits);
      this.pool.dispatch(
        {
          path: route === 'chat/completions' ? this.chatPath : `${this.basePath}/${route}`,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: whole ? 'application/json' : 'text/event-stream',
            ...headers,
          },
          body,
          headersTimeout: this.timeouts.headersTimeoutMs,
          bodyTimeout: this.timeouts.bodyTimeoutMs,
        },
        exchange,
      );
      return () => exchange.cancel();
    });
  }

  /**
   * POSTs one JSON request to `{base}/{route}` (a pooling API: `embeddings`, `rerank`, `score`) and
   * resolves with its parsed JSON answer. A non-200 status, a body that is not JSON, a timeout or a
   * broken connection rejects with an UpstreamError; `signal` aborts the request (the client left).
   */
  async postJson(
    route: string,
    body: string,
    headers: Record<string, string>,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    let status: number;
    let text: string;
    try {
      const response = await this.pool.request({
        path: `${this.basePath}/${route}`,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
        body,
        signal,
        headersTimeout: this.timeouts.headersTimeoutMs,
        bodyTimeout: this.timeouts.bodyTimeoutMs,
      });
      status = response.statusCode;
      text = await response.body.text();
    } catch (error) {
      if (signal.aborted) throw error;
      throw upstreamTransportError(error, this.timeouts, true);
    }
    if (status !== 200)
      throw upstreamContextLengthError(status, text) ?? upstreamStatusError(status, text, this.redact);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw upstreamProtocolError('The upstream answered with a body that is not JSON.', error);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw upstreamProtocolError('The upstream answered with JSON that is not an object.');
    return parsed as Record<string, unknown>;
  }

  /**
   * One round of health probes (see healthProbePaths and judgeProbeStatus): the first path that
   * passes or fails decides; when every path is inconclusive (no such route) the state is
   * `unknown`. No answer within `timeoutMs` fails.
   */
  async checkHealth(timeoutMs: number): Promise<ProbeResult> {
    const answers: string[] = [];
    for (let offset = 0; offset < this.probePaths.length; offset += 1) {
      const index = (this.probeStart + offset) % this.probePaths.length;
      const path = this.probePaths[index];
      const status = await this.probe(path, timeoutMs);
      if (typeof status === 'string')
        return { state: 'failing', detail: [...answers, `GET ${path}: ${status}`].join(', ') };
      answers.push(`GET ${path} answered ${status}`);
      const verdict = judgeProbeStatus(status);
      if (verdict === 'inconclusive') continue;
      this.probeStart = index;
      return { state: verdict === 'pass' ? 'passing' : 'failing', detail: answers.join(', ') };
    }
    return { state: 'unknown', detail: answers.join(', ') };
  }

  /** One GET: its status, or what went wrong (an error code) when there was no answer. */
  private async probe(path: string, timeoutMs: number): Promise<number | string> {
    try {
      const response = await this.pool.request({
        path,
        method: 'GET',
        headers: this.probeHeaders,
        signal: AbortSignal.timeout(timeoutMs),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      await response.body.dump();
      return response.statusCode;
    } catch (error) {
      const code = (error as { code?: unknown; name?: unknown })?.code ?? (error as { name?: unknown })?.name;
      return typeof code === 'string' && /^[\w-]{1,40}$/.test(code) ? code : 'no answer';
    }
  }

  /** Closes every socket at once, in-flight requests included. */
  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
