import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { classifyChatData, completionTokensOf, type ChatFrameKind } from './chat-frame.js';
import { SseReader } from './sse-reader.js';

/** One Chat Completions request as the load generator sends it. */
export interface ChatCall {
  /** The full `/v1/chat/completions` URL, already checked to be loopback. */
  url: URL;
  agent: Agent;
  /** The JSON body, serialized once per scenario. */
  body: string;
  headers?: Record<string, string>;
  /** The request is destroyed (and counted as failed) past this long. */
  timeoutMs: number;
}

export interface StreamHandlers {
  /** The response headers arrived with status 200. */
  onOpen?(at: number, headers: IncomingHttpHeaders): void;
  /** A data frame arrived; `at` is performance.now() when its bytes were read; `data` is its text. */
  onFrame?(kind: ChatFrameKind, at: number, data: string): void;
  /** An SSE comment arrived (`keepalive.mode: comments`). */
  onComment?(at: number): void;
}

/**
 * How a request ended: `completed` (a whole answer: `[DONE]` or a JSON body), `failed` (with a
 * short reason: an HTTP status, a socket error, an in-band error, a body cut short, a timeout), or
 * `aborted` by the load generator itself (not an error).
 */
export type RequestOutcome =
  | { kind: 'completed'; at: number; completionTokens?: number }
  | { kind: 'failed'; at: number; reason: string }
  | { kind: 'aborted'; at: number };

export interface RequestHandle {
  readonly done: Promise<RequestOutcome>;
  /** Hangs up (destroys the socket); the outcome becomes `aborted` unless it already ended. */
  abort(): void;
}

/** POSTs a streaming chat request and reads its SSE answer, reporting each frame as it arrives. */
export function streamChat(call: ChatCall, handlers: StreamHandlers = {}): RequestHandle {
  return exchange(call, (response, settle) => {
    handlers.onOpen?.(performance.now(), response.headers);
    let at = 0;
    let sawDone = false;
    let inBandError = false;
    let completionTokens: number | undefined;
    const reader = new SseReader(
      ({ data }) => {
        const kind = classifyChatData(data);
        if (kind === 'done') sawDone = true;
        else if (kind === 'error') inBandError = true;
        else if (kind === 'other') completionTokens = completionTokensOf(data) ?? completionTokens;
        handlers.onFrame?.(kind, at, data);
      },
      () => handlers.onComment?.(at),
    );
    response.setEncoding('utf8');
    response.on('data', (text: string) => {
      at = performance.now();
      reader.feed(text);
    });
    response.on('end', () => {
      if (inBandError) settle({ kind: 'failed', at: performance.now(), reason: 'in-band error frame' });
      else if (!sawDone) settle({ kind: 'failed', at: performance.now(), reason: 'stream ended without [DONE]' });
      else settle({ kind: 'completed', at: performance.now(), completionTokens });
    });
  });
}

/** POSTs a non-streaming request; completed when a 200 JSON body holding `marker` (chat's `choices`) arrived whole. */
export function postChat(call: ChatCall, marker = '"choices"'): RequestHandle {
  return exchange(call, (response, settle) => {
    let body = '';
    response.setEncoding('utf8');
    response.on('data', (text: string) => (body += text));
    response.on('end', () => {
      const ok = body.startsWith('{') && body.includes(marker);
      settle(
        ok
          ? { kind: 'completed', at: performance.now() }
          : { kind: 'failed', at: performance.now(), reason: 'malformed body' },
      );
    });
  });
}

/** Ends a request with its outcome (only the first call counts). */
export type Settle = (outcome: RequestOutcome) => void;

/** POSTs `call` and hands a 200 answer to `read`; statuses, socket errors, timeouts and aborts settle here. */
export function exchange(
  call: ChatCall,
  read: (response: import('node:http').IncomingMessage, settle: Settle) => void,
): RequestHandle {
  let settle!: Settle;
  let settled = false;
  let aborting = false;
  const done = new Promise<RequestOutcome>((resolve) => {
    settle = (outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
  });
  const outgoing = request({
    agent: call.agent,
    method: 'POST',
    hostname: call.url.hostname,
    port: call.url.port,
    path: call.url.pathname,
    headers: {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(call.body),
      ...call.headers,
    },
  });
  const timer = setTimeout(() => {
    settle({ kind: 'failed', at: performance.now(), reason: 'timeout' });
    outgoing.destroy();
  }, call.timeoutMs);
  const fail = (error: Error & { code?: string }) =>
    settle(
      aborting
        ? { kind: 'aborted', at: performance.now() }
        : { kind: 'failed', at: performance.now(), reason: error.code ?? error.message },
    );
  outgoing.on('error', fail);
  outgoing.on('response', (response) => {
    response.on('error', fail);
    response.on('aborted', () => fail(new Error('response aborted')));
    response.on('close', () => {
      if (!response.complete) fail(new Error('connection closed mid-response'));
    });
    if (response.statusCode !== 200) {
      response.resume();
      response.on('end', () =>
        settle({ kind: 'failed', at: performance.now(), reason: `HTTP ${response.statusCode}` }),
      );
      return;
    }
    read(response, settle);
  });
  outgoing.end(call.body);
  return {
    done,
    abort: () => {
      if (settled) return;
      aborting = true;
      outgoing.destroy();
    },
  };
}

/** A keep-alive agent with a socket per concurrent request, as a real client pool would be. */
export function keepAliveAgent(concurrency: number): Agent {
  return new Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency, scheduling: 'fifo' });
}
