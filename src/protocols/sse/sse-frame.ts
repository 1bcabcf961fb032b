/**
 * One Server-Sent Events frame. `data` is already serialized (JSON text or `[DONE]`), so a frame
 * is encoded once and written as is. A comment frame carries no event and is dropped by every
 * SDK parser; it only keeps byte-counting idle timers alive.
 */
export type SseFrame = { event?: string; data: string } | { comment: string };

export const DONE_FRAME: SseFrame = Object.freeze({ data: '[DONE]' });
export const KEEPALIVE_COMMENT: SseFrame = Object.freeze({ comment: 'keep-alive' });

/** The wire text of a frame. `data` never holds a newline: it is single-line JSON or `[DONE]`. */
export function serializeSseFrame(frame: SseFrame): string {
  if ('comment' in frame) return `: ${frame.comment}\n\n`;
  if (frame.event !== undefined) return `event: ${frame.event}\ndata: ${frame.data}\n\n`;
  return `data: ${frame.data}\n\n`;
}
