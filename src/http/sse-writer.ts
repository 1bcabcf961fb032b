import type { ServerResponse } from 'node:http';
import { serializeSseFrame, type SseFrame } from '../protocols/sse/sse-frame.js';

/**
 * Writes SSE frames to a raw Node response.
 *
 * Frames produced in one turn of the event loop (an upstream read often yields many chunks) are
 * joined and written with one `write()` at the end of the turn. When the socket pushes back
 * (`write()` returns false) frames accumulate until `drain`; past `maxBufferedBytes` the client is
 * dropped, which closes the response and so cancels the work behind it.
 */
export class SseWriter {
  private pending = '';
  private flushQueued = false;
  private waitingForDrain = false;
  private ended = false;

  constructor(
    private readonly response: ServerResponse,
    private readonly maxBufferedBytes: number,
    private readonly onDrop: () => void = () => undefined,
  ) {
    response.on('drain', () => {
      this.waitingForDrain = false;
      this.flush();
    });
  }

  open(headers: Record<string, string | number | string[]>): void {
    this.response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      ...headers,
    });
  }

  write(frame: SseFrame): void {
    if (this.ended) return;
    this.pending += serializeSseFrame(frame);
    if (this.pending.length + this.response.writableLength > this.maxBufferedBytes) {
      this.drop();
      return;
    }
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(() => {
        this.flushQueued = false;
        this.flush();
      });
    }
  }

  /** Writes what is pending and ends the response. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    const rest = this.pending;
    this.pending = '';
    if (!this.response.destroyed) this.response.end(rest);
  }

  get isEnded(): boolean {
    return this.ended;
  }

  private flush(): void {
    if (this.waitingForDrain || this.pending.length === 0 || this.ended || this.response.destroyed) return;
    const text = this.pending;
    this.pending = '';
    if (!this.response.write(text)) this.waitingForDrain = true;
  }

  private drop(): void {
    this.ended = true;
    this.pending = '';
    this.response.destroy();
    this.onDrop();
  }
}
