import { describe, expect, it } from 'vitest';
import { secretRedactor } from './secret-redactor.js';
import {
  upstreamFrameError,
  upstreamProtocolError,
  upstreamStallError,
  upstreamStatusError,
  upstreamTransportError,
} from './upstream-error.js';

const body = (message: string) => JSON.stringify({ error: { message, type: 'Error', code: 0 } });
const redact = secretRedactor(['sk-upstream-secret']);

describe('upstreamStatusError', () => {
  it("passes the upstream's message on for the client's own errors, redacted", () => {
    for (const status of [400, 413, 422]) {
      expect(upstreamStatusError(status, body('prompt too long for key sk-upstream-secret'), redact)).toMatchObject({
        kind: 'invalid_request',
        message: `The upstream answered ${status}: prompt too long for key [redacted]`,
      });
    }
    expect(upstreamStatusError(404, body('The model `llama` does not exist.'), redact).message).toBe(
      'The upstream answered 404: The model `llama` does not exist.',
    );
  });

  it('names the status only for anything else', () => {
    expect(upstreamStatusError(401, body('bad key sk-upstream-secret'), redact)).toMatchObject({
      kind: 'upstream',
      message: 'The upstream answered 401 Unauthorized.',
    });
    expect(upstreamStatusError(403, 'denied', redact).message).toBe('The upstream answered 403 Forbidden.');
    expect(upstreamStatusError(404, '<html>Not Found: /proxy/v1/chat</html>', redact).message).toBe(
      'The upstream answered 404 Not Found.',
    );
    expect(upstreamStatusError(500, body('could not run "the prompt"'), redact)).toMatchObject({
      message: 'The upstream answered 500 Internal Server Error.',
      retryable: true,
      replicaFault: true,
    });
    expect(upstreamStatusError(429, body('slow down'), redact)).toMatchObject({
      kind: 'overloaded',
      message: 'The upstream answered 429 Too Many Requests.',
    });
    expect(upstreamStatusError(599, '', redact).message).toBe('The upstream answered 599.');
    expect(upstreamStatusError(400, '', redact).message).toBe('The upstream answered 400 Bad Request.');
  });

  it('redacts before it clips, so a secret cut by the clip leaves nothing of itself', () => {
    const message = upstreamStatusError(400, body(`${'x'.repeat(490)} sk-upstream-secret`), redact).message;
    expect(message).not.toMatch(/sk-up/);
    expect(message).toContain('[redac');
  });
});

describe('what cut an answer, for mid-stream failover', () => {
  const transport = (code: string) =>
    upstreamTransportError(Object.assign(new Error(code), { code }), { headersTimeoutMs: 100, bodyTimeoutMs: 100 });

  it('names the failures another replica may continue after', () => {
    expect(transport('UND_ERR_SOCKET').cut).toBe('reset');
    expect(transport('ECONNREFUSED').cut).toBe('reset');
    expect(upstreamProtocolError('ended early', undefined, 'reset').cut).toBe('reset');
    expect(upstreamProtocolError('not JSON').cut).toBe('error');
    expect(upstreamStatusError(503, '').cut).toBe('status');
    expect(upstreamStatusError(429, '').cut).toBe('status');
    expect(upstreamFrameError({ error: { message: 'engine died', code: 500 } }).cut).toBe('error');
    expect(upstreamFrameError({ error: 'no code' }).cut).toBe('error');
    expect(transport('UND_ERR_BODY_TIMEOUT').cut).toBe('stall');
    expect(upstreamStallError(300)).toMatchObject({ cut: 'stall', kind: 'timeout', replicaFault: true });
  });

  it("leaves the request's own failures uncut: they would fail anywhere", () => {
    expect(upstreamStatusError(400, '').cut).toBeUndefined();
    expect(upstreamStatusError(401, '').cut).toBeUndefined();
    expect(upstreamFrameError({ error: { message: 'too long', code: 400 } }).cut).toBeUndefined();
    // A whole answer slower than headersTimeoutMs: a long generation, not a broken replica.
    expect(
      upstreamTransportError(
        Object.assign(new Error(), { code: 'UND_ERR_HEADERS_TIMEOUT' }),
        { headersTimeoutMs: 1, bodyTimeoutMs: 1 },
        true,
      ).cut,
    ).toBeUndefined();
  });
});
