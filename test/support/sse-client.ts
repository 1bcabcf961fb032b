import { createParser, type EventSourceMessage } from 'eventsource-parser';

/** One frame as it came over the wire, with the time it arrived (ms since the request was sent). */
export type WireFrame =
  { kind: 'event'; event?: string; data: string; at: number } | { kind: 'comment'; comment: string; at: number };

export interface SseExchange {
  status: number;
  headers: Headers;
  frames: WireFrame[];
  /** The JSON of every data frame except `[DONE]`. */
  json: () => Array<Record<string, any>>;
}

export interface SseRequestOptions {
  /** Called for each frame; return true to hang up right there. */
  onFrame?: (frame: WireFrame, frames: WireFrame[]) => boolean | void;
  headers?: Record<string, string>;
}

/**
 * POSTs a JSON body and reads the SSE answer frame by frame with a real SSE parser, keeping
 * comments, so tests can check the exact wire frames and hang up at a chosen point.
 */
export async function postSse(url: string, body: unknown, options: SseRequestOptions = {}): Promise<SseExchange> {
  const controller = new AbortController();
  const started = performance.now();
  const frames: WireFrame[] = [];
  let hungUp = false;
  const push = (frame: WireFrame) => {
    frames.push(frame);
    if (!hungUp && options.onFrame?.(frame, frames)) {
      hungUp = true;
      controller.abort();
    }
  };
  const parser = createParser({
    onEvent: (message: EventSourceMessage) =>
      push({ kind: 'event', event: message.event, data: message.data, at: performance.now() - started }),
    onComment: (comment) => push({ kind: 'comment', comment: comment.trim(), at: performance.now() - started }),
  });

  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  try {
    const decoder = new TextDecoder();
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      if (hungUp) break;
    }
  } catch (error) {
    if (!hungUp) throw error;
  }
  return {
    status: response.status,
    headers: response.headers,
    frames,
    json: () =>
      frames.flatMap((frame) => (frame.kind === 'event' && frame.data !== '[DONE]' ? [JSON.parse(frame.data)] : [])),
  };
}
