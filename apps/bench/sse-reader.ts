/** One dispatched SSE event: its type (`message` when the frame had no `event:` line) and data. */
export interface SseMessage {
  event: string;
  data: string;
}

/**
 * A minimal, correct incremental Server-Sent Events parser (WHATWG "event stream interpretation"):
 * text may be split anywhere; lines end with LF or CRLF; `data:` lines of one frame are joined
 * with LF; a blank line dispatches; `:` lines are comments; a frame without data is not
 * dispatched; an unfinished frame at the end of the body is dropped. No allocation beyond the
 * line and data strings, so that it stays cheap next to the servers under test.
 */
export class SseReader {
  private buffer = '';
  private data: string | undefined;
  private event = '';

  constructor(
    private readonly onMessage: (message: SseMessage) => void,
    private readonly onComment: (text: string) => void = () => {},
  ) {}

  feed(text: string): void {
    const buffer = this.buffer.length === 0 ? text : this.buffer + text;
    let start = 0;
    let newline = buffer.indexOf('\n', start);
    while (newline !== -1) {
      const end = newline > start && buffer.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
      this.line(buffer, start, end);
      start = newline + 1;
      newline = buffer.indexOf('\n', start);
    }
    this.buffer = start === buffer.length ? '' : buffer.slice(start);
  }

  private line(buffer: string, start: number, end: number): void {
    if (start === end) {
      if (this.data !== undefined) this.onMessage({ event: this.event || 'message', data: this.data });
      this.data = undefined;
      this.event = '';
      return;
    }
    if (buffer.charCodeAt(start) === 58 /* : */) {
      this.onComment(buffer.slice(start + 1, end).trimStart());
      return;
    }
    const colon = buffer.indexOf(':', start);
    const fieldEnd = colon === -1 || colon > end ? end : colon;
    let valueStart = fieldEnd === end ? end : fieldEnd + 1;
    if (valueStart < end && buffer.charCodeAt(valueStart) === 32) valueStart += 1;
    const field = buffer.slice(start, fieldEnd);
    if (field === 'data') {
      const value = buffer.slice(valueStart, end);
      this.data = this.data === undefined ? value : `${this.data}\n${value}`;
    } else if (field === 'event') {
      this.event = buffer.slice(valueStart, end);
    }
  }
}
