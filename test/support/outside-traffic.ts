import type { MockUpstream } from '../../apps/mock-upstream/mock-upstream.js';

/** Requests sent to a mock directly, by-passing Gantry, as outsideTraffic returns them. */
export interface OutsideTraffic {
  /** Settles once each request has its answer's headers, or failed. */
  started: Promise<unknown>;
  /** Aborts every request. */
  stop(): void;
}

/** Traffic Gantry did not send: long streamed answers asked of one mock directly, held open until `stop`. */
export function outsideTraffic(mock: MockUpstream, requests: number): OutsideTraffic {
  const aborts: AbortController[] = [];
  const sent = Array.from({ length: requests }, async () => {
    const abort = new AbortController();
    aborts.push(abort);
    // The body is left unread (not cancelled, which would close the request): the answer goes on.
    await fetch(`${mock.url}/chat/completions`, {
      method: 'POST',
      signal: abort.signal,
      headers: {
        'content-type': 'application/json',
        'x-mock-behaviour': JSON.stringify({ tokens: 2_000, tokenIntervalMs: 50 }),
      },
      body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'batch job' }] }),
    });
  });
  return {
    started: Promise.all(sent.map((request) => request.catch(() => undefined))),
    stop: () => aborts.forEach((abort) => abort.abort()),
  };
}
