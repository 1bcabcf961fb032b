import type { ServerResponse } from 'node:http';
import { serializeSseFrame, type SseFrame } from '../../protocols/sse/sse-frame.js';

/**
 * Writes SSE frames to a raw Node response.
 *
 * Frames produced in one turn of the event loop (an upstream read often yields many chunks) are
 * joined and written with one `write()` at the end of the turn, however large. When the socket
 * pushes back (`write()` returned false) frames accumulate until `drain`; if that backlog passes
 * `maxBufferedBytes`, the client is dropped (`onDrop`), which closes the response.
 */
export class SseWriter {
  private pending = '';
  private flushQueued = false;
  private waitingForDrain = false;
  private ended = false;
  /** From opening to the end of that turn: the head waits for the first frames. */
  private corked = false;
  /** One function per stream for the end-of-turn flush, not one per write. */
  private readonly flushAtTurnEnd = () => {
    this.flushQueued = false;
    this.flush();
    if (this.corked) {
      this.corked = false;
      this.response.uncork();
    }
  };

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
    // Sent now, on its own: Node keeps the head it wrote for the response's whole life, and a
    // head sent alone is flattened as it is written (prepended to the first frame, it stays a
    // rope of ~30 strings, ~0.7 KB of an idle stream). Corked until this turn's flush, so that it
    // leaves in one write with the frames an encoder sends on opening (a role chunk, a start event).
    this.response.cork();
    this.response.flushHeaders();
    this.corked = true;
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(this.flushAtTurnEnd);
    }
  }

  write(frame: SseFrame): void {
    if (this.ended) return;
    this.pending += serializeSseFrame(frame);
    // Only a real backlog counts: frames waiting for this turn's flush are not the client's fault.
    if (this.waitingForDrain && this.pending.length + this.response.writableLength > this.maxBufferedBytes) {
      this.drop();
      return;
    }
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(this.flushAtTurnEnd);
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
