import { Pool } from 'undici';
import { Observable } from 'rxjs';
import { UpstreamExchange } from './upstream-exchange.js';

export interface UpstreamTimeouts {
  connectTimeoutMs: number;
  /** 0: no limit. */
  headersTimeoutMs: number;
  /** Longest silence between body reads; 0: no limit. */
  bodyTimeoutMs: number;
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
  private readonly healthPath: string;

  constructor(
    baseUrl: string,
    private readonly timeouts: UpstreamTimeouts,
  ) {
    const url = new URL(baseUrl);
    const prefix = url.pathname.replace(/\/+$/, '');
    this.chatPath = `${prefix}/chat/completions`;
    // vLLM, SGLang and llama.cpp serve /health at the root, beside /v1.
    this.healthPath = `${prefix.replace(/\/v1$/, '')}/health`;
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
   * generation. A non-200 status, a timeout or a broken connection errors with an UpstreamError.
   */
  postChat(body: string, headers: Record<string, string>, whole: boolean): Observable<string> {
    return new Observable<string>((subscriber) => {
      const exchange = new UpstreamExchange(subscriber, this.timeouts, whole);
      this.pool.dispatch(
        {
          path: this.chatPath,
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: whole ? 'application/json' : 'text/event-stream', ...headers },
          body,
          headersTimeout: this.timeouts.headersTimeoutMs,
          bodyTimeout: this.timeouts.bodyTimeoutMs,
        },
        exchange,
      );
      return () => exchange.cancel();
    });
  }

  /** `GET /health`: true on any 2xx within `timeoutMs`. */
  async checkHealth(timeoutMs: number): Promise<boolean> {
    try {
      const response = await this.pool.request({
        path: this.healthPath,
        method: 'GET',
        signal: AbortSignal.timeout(timeoutMs),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      await response.body.dump();
      return response.statusCode >= 200 && response.statusCode < 300;
    } catch {
      return false;
    }
  }

  /** Closes every socket at once, in-flight requests included. */
  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
