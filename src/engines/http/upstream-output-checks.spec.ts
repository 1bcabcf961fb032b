import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lastValueFrom, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { ChatChunkDecoder } from './chat-chunk-decoder.js';
import { UpstreamConnection } from './upstream-connection.js';
import { UpstreamError } from './upstream-error.js';

const chunk = (delta: unknown, usage?: unknown) => ({
  choices: [{ index: 0, delta, finish_reason: null }],
  ...(usage === undefined ? {} : { usage }),
});

describe('upstream output is checked, not trusted as sent', () => {
  it('content, reasoning or a tool call that is not a string is a malformed chunk, not `[object Object]`', () => {
    for (const delta of [
      { content: { text: 'x' } },
      { content: 42 },
      { reasoning_content: ['a'] },
      { tool_calls: [{ index: 0, id: 'c', function: { name: 'f', arguments: { a: 1 } } }] },
      { tool_calls: 'nope' },
    ]) {
      const decoder = new ChatChunkDecoder(() => 0);
      expect(() => decoder.decodeChunk(chunk(delta) as never), JSON.stringify(delta)).toThrow(
        /chunk whose text is not a string/,
      );
    }
    expect(new ChatChunkDecoder(() => 0).decodeChunk(chunk({ content: null, role: 'assistant' }) as never)).toEqual([]);
  });

  it('usage counts that are no token counts (1e308, a string, negative, fractional) are ignored, and told once', () => {
    const told: string[] = [];
    const decoder = new ChatChunkDecoder(() => 0, 0, { onBadUsage: (message) => told.push(message) });
    const usageOf = (events: readonly unknown[]) => (events[0] as { usage: Record<string, number> }).usage;
    expect(
      usageOf(decoder.decodeChunk(chunk({ content: 'a' }, { prompt_tokens: 1e308, completion_tokens: 1 }) as never)),
    ).toMatchObject({ promptTokens: 0, completionTokens: 1 });
    expect(
      usageOf(decoder.decodeChunk(chunk({ content: 'b' }, { prompt_tokens: 'abc', completion_tokens: -2 }) as never)),
    ).toMatchObject({ promptTokens: 0, completionTokens: 0 });
    expect(
      usageOf(
        decoder.decodeChunk(
          chunk(
            { content: 'c' },
            { prompt_tokens: 5, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 1.5 } },
          ) as never,
        ),
      ),
    ).toMatchObject({ promptTokens: 5, completionTokens: 3, cachedTokens: 0 });
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(/usage counts that are not token counts/);
  });

  describe('limits on what is read', () => {
    let server: Server | undefined;
    let connection: UpstreamConnection | undefined;
    afterEach(async () => {
      await connection?.close();
      await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    });

    /** A server whose chat answer is `body`, written in 64 KiB pieces; the connection's body as the client reads it. */
    async function read(body: string, limits: { maxUpstreamLineBytes: number; maxUpstreamAnswerBytes: number }) {
      server = createServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        for (let at = 0; at < body.length; at += 65_536) response.write(body.slice(at, at + 65_536));
        response.end();
      });
      await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
      connection = new UpstreamConnection(
        url,
        { connectTimeoutMs: 1000, headersTimeoutMs: 5000, bodyTimeoutMs: 5000 },
        { limits },
      );
      return lastValueFrom(connection.postChat('{}', {}, false).pipe(toArray())).then(
        (pieces) => pieces.join(''),
        (error: unknown) => error,
      );
    }

    it('one SSE line past maxUpstreamLineBytes is refused as a malformed stream, before it is held whole', async () => {
      const error = await read(`data: {"a":"${'x'.repeat(300_000)}`, {
        maxUpstreamLineBytes: 100_000,
        maxUpstreamAnswerBytes: 10_000_000,
      });
      expect(error).toBeInstanceOf(UpstreamError);
      expect(error).toMatchObject({
        message: 'The upstream sent an SSE line longer than 100000 bytes (maxUpstreamLineBytes).',
        replicaFault: true,
      });
    });

    it('a line that ends after the limit is refused too; lines under it pass however many', async () => {
      const long = await read(`data: ${'y'.repeat(150_000)}\n\n`, {
        maxUpstreamLineBytes: 100_000,
        maxUpstreamAnswerBytes: 10_000_000,
      });
      expect(long).toMatchObject({ message: expect.stringMatching(/SSE line longer than 100000 bytes/) });
      const many = `data: ${'z'.repeat(50_000)}\n\n`.repeat(10);
      expect(await read(many, { maxUpstreamLineBytes: 100_000, maxUpstreamAnswerBytes: 10_000_000 })).toBe(many);
    });

    it('an answer past maxUpstreamAnswerBytes ends with a clear error, not retried elsewhere', async () => {
      const error = await read(`data: ${'w'.repeat(1000)}\n\n`.repeat(300), {
        maxUpstreamLineBytes: 100_000,
        maxUpstreamAnswerBytes: 200_000,
      });
      expect(error).toMatchObject({
        message: "The upstream's answer was larger than 200000 bytes (maxUpstreamAnswerBytes).",
        retryable: false,
      });
    });
  });
});
