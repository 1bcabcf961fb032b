import { createParser, type EventSourceParser } from 'eventsource-parser';
import type { ClientEvent } from './client-event.js';
import type { SseDecoder } from './gateway-api.js';

/**
 * Text of an SSE body in, client events out: the SSE parser splits frames, each API's decoder maps
 * them, and comment lines (`: keep-alive`, the transport keep-alive of `keepalive.mode: comments`)
 * become heartbeats, since the user should see those too. Pure; `fetch` lives in stream-answer.ts.
 */
export class SseEventReader {
  private readonly parser: EventSourceParser;
  private pending: ClientEvent[] = [];

  constructor(decode: SseDecoder) {
    this.parser = createParser({
      onEvent: (message) => this.pending.push(...decode({ event: message.event, data: message.data })),
      onComment: () => this.pending.push({ type: 'heartbeat' }),
    });
  }

  /** Feeds a piece of the body (frames may be split anywhere); returns the events it completed. */
  feed(text: string): ClientEvent[] {
    this.parser.feed(text);
    return this.take();
  }

  /** Ends the body: a last frame without its blank line still counts. */
  end(): ClientEvent[] {
    this.parser.reset({ consume: true });
    return this.take();
  }

  private take(): ClientEvent[] {
    const events = this.pending;
    this.pending = [];
    return events;
  }
}
