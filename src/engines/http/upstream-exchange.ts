import { StringDecoder } from 'node:string_decoder';
import type { Subscriber } from 'rxjs';
import type { Dispatcher } from 'undici';
import type { Redact } from './secret-redactor.js';
import { upstreamContextLengthError } from './upstream-context-error.js';
import { upstreamOversizeError, upstreamStatusError, upstreamTransportError } from './upstream-error.js';
import type { UpstreamLimits, UpstreamTimeouts } from './upstream-connection.js';

/** An error answer's body is read for its message; more than this is not worth holding. */
const MAX_ERROR_BODY = 16_384;

/**
 * One chat completion request, as an undici dispatch handler: a 200's headers are told to
 * `onAccepted`, each socket read of its body is handed to `subscriber` as text, synchronously; another status ends in an UpstreamError (with
 * the body's message when it is the client's to read); a timeout or broken connection in a transport UpstreamError.
 *
 * The dispatch API instead of `request()`: no body stream, promise, AbortController or abort
 * listener per request, and each read reaches the decoder straight from undici's parser instead
 * of through a Readable's buffering and `data` events.
 */
export class UpstreamExchange implements Dispatcher.DispatchHandler {
  private controller?: Dispatcher.DispatchController;
  private cancelled = false;
  private finished = false;
  private status = 0;
  private readonly decoder = new StringDecoder('utf8');
  private errorBody = '';
  /** Bytes of the answer so far, and of its SSE line not yet ended. */
  private answerBytes = 0;
  private lineBytes = 0;

  constructor(
    private readonly subscriber: Subscriber<string>,
    private readonly timeouts: UpstreamTimeouts,
    /** One JSON answer was asked for (see upstreamTransportError). */
    private readonly whole: boolean,
    /** Applied to an error answer's message (see upstreamStatusError). */
    private readonly redact: Redact,
    /** Told when a 200's headers arrive: the upstream took the request on. */
    private readonly onAccepted: () => void = () => undefined,
    private readonly limits: UpstreamLimits = { maxUpstreamLineBytes: Infinity, maxUpstreamAnswerBytes: Infinity },
  ) {}

  /** The subscriber is gone: abort the request (closing its socket, which is how vLLM learns to stop). */
  cancel(): void {
    if (this.finished || this.cancelled) return;
    this.cancelled = true;
    this.controller?.abort(new Error('The client went away.'));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Cancelled while the request waited for a connection.
    if (this.cancelled) controller.abort(new Error('The client went away.'));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    this.status = statusCode;
    if (statusCode === 200 && !this.cancelled) this.onAccepted();
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.cancelled) return;
    if (this.status === 200) {
      if (this.oversize(chunk)) return;
      this.subscriber.next(this.decoder.write(chunk));
    } else if (this.errorBody.length < MAX_ERROR_BODY) this.errorBody += this.decoder.write(chunk);
  }

  /**
   * Refuses an answer past its limits before it is decoded (a 300 MB line would be held whole by
   * the SSE parser): the subscriber's error tears the request down, which aborts it.
   */
  private oversize(chunk: Buffer): boolean {
    this.answerBytes += chunk.length;
    if (this.answerBytes > this.limits.maxUpstreamAnswerBytes)
      return this.refuse(upstreamOversizeError('answer', this.limits.maxUpstreamAnswerBytes));
    if (this.whole) return false;
    const max = this.limits.maxUpstreamLineBytes;
    const last = Math.max(chunk.lastIndexOf(10), chunk.lastIndexOf(13));
    if (last < 0) this.lineBytes += chunk.length;
    else {
      // The line that was open ends here; the lines whole in one read are shorter than the read.
      const first = lineEndIn(chunk);
      if (this.lineBytes + first > max) return this.refuse(upstreamOversizeError('line', max));
      this.lineBytes = chunk.length - last - 1;
    }
    if (this.lineBytes > max) return this.refuse(upstreamOversizeError('line', max));
    return false;
  }

  private refuse(error: Error): true {
    this.subscriber.error(error);
    return true;
  }

  onResponseEnd(): void {
    this.finished = true;
    if (this.cancelled) return;
    if (this.status === 200) this.subscriber.complete();
    else {
      const body = this.errorBody + this.decoder.end();
      // A prompt over the context is the client's to fix, in its own API's words (no upstream text).
      this.subscriber.error(
        upstreamContextLengthError(this.status, body) ?? upstreamStatusError(this.status, body, this.redact),
      );
    }
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.finished = true;
    if (!this.cancelled) this.subscriber.error(upstreamTransportError(error, this.timeouts, this.whole));
  }
}

/** Where the first line ending (LF or CR) of `chunk` is; the caller knows there is one. */
function lineEndIn(chunk: Buffer): number {
  const lf = chunk.indexOf(10);
  const cr = chunk.indexOf(13);
  return lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr);
}
