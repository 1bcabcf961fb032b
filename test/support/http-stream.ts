import { Agent, request } from 'node:http';
import { createParser } from 'eventsource-parser';

/** One SSE frame as received: an event (with its name, if any) or a comment. */
export type Frame = { kind: 'event'; event?: string; data: string } | { kind: 'comment'; comment: string };

export interface StreamOutcome {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  frames: Frame[];
  /** How the exchange ended: the server ended the body, the client hung up, or it failed. */
  end: 'server' | 'client' | 'error' | 'timeout';
  error?: string;
  /** The non-SSE body, for answers that were not streams (errors). */
  body: string;
}

export interface StreamOptions {
  agent?: Agent;
  headers?: Record<string, string>;
  /** Called for each frame; return true to hang up right there. */
  onFrame?: (frame: Frame, frames: Frame[]) => boolean | void;
  /** Hard limit for the whole exchange; past it the request is destroyed and reported as 'timeout'. */
  timeoutMs?: number;
  /** Called when the response's status and headers arrive. */
  onResponse?: (status: number, headers: Record<string, string | string[] | undefined>) => void;
}

/** An agent that never pools or queues: one fresh connection per request, as many as asked. */
export function unpooledAgent(): Agent {
  return new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
}

/**
 * POSTs JSON with node:http and reads the SSE answer frame by frame, so that thousands can run at
 * once (no fetch pool) and each can hang up at a precise frame by destroying its socket.
 */
export function postStream(
  baseUrl: string,
  path: string,
  body: unknown,
  options: StreamOptions = {},
): Promise<StreamOutcome> {
  const url = new URL(path, baseUrl);
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve) => {
    const frames: Frame[] = [];
    let settled = false;
    let outcome: StreamOutcome = { status: 0, headers: {}, frames, end: 'error', body: '' };
    const finish = (end: StreamOutcome['end'], error?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...outcome, end, error });
    };
    const req = request(url, {
      method: 'POST',
      agent: options.agent,
      headers: { 'content-type': 'application/json', 'content-length': payload.length, ...options.headers },
    });
    const timer = setTimeout(() => {
      finish('timeout');
      req.destroy();
    }, options.timeoutMs ?? 30_000);
    const push = (frame: Frame) => {
      frames.push(frame);
      if (!settled && options.onFrame?.(frame, frames)) {
        finish('client');
        req.destroy();
      }
    };
    const parser = createParser({
      onEvent: (message) => push({ kind: 'event', event: message.event, data: message.data }),
      onComment: (comment) => push({ kind: 'comment', comment: comment.trim() }),
    });
    req.on('response', (response) => {
      outcome = { ...outcome, status: response.statusCode ?? 0, headers: response.headers };
      options.onResponse?.(outcome.status, response.headers);
      const isSse = String(response.headers['content-type']).startsWith('text/event-stream');
      response.setEncoding('utf8');
      response.on('data', (text: string) => {
        if (isSse) parser.feed(text);
        else outcome.body += text;
      });
      response.on('end', () => finish('server'));
      response.on('aborted', () => finish('error', 'aborted by the server'));
      response.on('error', (error) => finish('error', error.message));
    });
    req.on('error', (error) => finish('error', error.message));
    req.end(payload);
  });
}

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32), so every run sees the same mix. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}
