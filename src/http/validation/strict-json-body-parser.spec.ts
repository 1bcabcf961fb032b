import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.js';
import {
  jsonShapeBeyond,
  nestsDeeperThan,
  releaseParsedBody,
  strictJsonBodyParser,
} from './strict-json-body-parser.js';

describe('strictJsonBodyParser', () => {
  const parse = (bytes: number[] | Buffer) =>
    new Promise<{ error: Error | null; body?: unknown }>((resolve) => {
      const parser = strictJsonBodyParser(Fastify(), 64);
      parser({} as never, Buffer.from(bytes), (error, body) => resolve({ error, body }));
    });
  const fatal = new TextDecoder('utf-8', { fatal: true });
  const json = (text: string) => [...Buffer.from(text)];

  it('refuses what a fatal UTF-8 decoder refuses, and reads what it reads', async () => {
    const strings = [
      [0x22, 0xff, 0x22], // a byte UTF-8 never uses
      [0x22, 0xc0, 0xaf, 0x22], // an overlong '/'
      [0x22, 0xed, 0xa0, 0x80, 0x22], // an encoded surrogate
      [0x22, 0xf4, 0x90, 0x80, 0x80, 0x22], // past U+10FFFF
      [0x22, 0xe2, 0x82, 0x22], // cut short
      [0x22, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80, 0x22], // € and an emoji
    ];
    for (const bytes of strings) {
      const { error, body } = await parse([0x7b, ...json('"s":'), ...bytes, 0x7d]);
      let expected: string | undefined;
      try {
        expected = (JSON.parse(fatal.decode(Buffer.from(bytes))) as string) ?? undefined;
      } catch {
        expected = undefined;
      }
      if (expected === undefined) {
        expect(error).toBeInstanceOf(GatewayError);
        expect(error?.message).toBe('The request body is not valid UTF-8.');
      } else {
        expect(error).toBeNull();
        expect(body).toEqual({ s: expected });
      }
    }
  });

  it('drops a leading byte order mark, as the decoder did', async () => {
    expect(await parse([0xef, 0xbb, 0xbf, ...json('{"a":1}')])).toEqual({ error: null, body: { a: 1 } });
  });
});

describe('releaseParsedBody', () => {
  // A small body is kept as its text, a large one as its bytes: both read back equal.
  it.each([
    ['a small body', 'é €\u0000'],
    ['a large body', 'é €'.repeat(4_000)],
  ])('lets go of %s: a later read parses it again, once, and a write replaces it', async (_, content) => {
    const app = Fastify();
    const parser = strictJsonBodyParser(app, 64);
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) =>
      parser(request, body as Buffer, done),
    );
    const seen: unknown[] = [];
    app.post('/', (request, reply) => {
      const before = request.body;
      releaseParsedBody(request);
      const after = request.body;
      seen.push(before, after, request.body);
      request.body = { replaced: true };
      reply.send(request.body);
    });
    const body = { model: 'm', messages: [{ role: 'user', content }], n: 1.5 };
    const response = await app.inject({
      method: 'POST',
      url: '/',
      headers: { 'content-type': 'application/json' },
      payload: `\ufeff${JSON.stringify(body)}`,
    });
    expect(response.json()).toEqual({ replaced: true });
    const [before, after, again] = seen;
    expect(before).toStrictEqual(body);
    expect(after).toStrictEqual(before);
    expect(after).not.toBe(before);
    expect(again).toBe(after);
    await app.close();
  });
});

describe('nestsDeeperThan', () => {
  it('measures objects and arrays alike, and ignores scalars', () => {
    expect(nestsDeeperThan('text', 1)).toBe(false);
    expect(nestsDeeperThan({}, 1)).toBe(false);
    expect(nestsDeeperThan({ a: [1, 2] }, 1)).toBe(true);
    expect(nestsDeeperThan({ a: [1, 2] }, 2)).toBe(false);
    expect(nestsDeeperThan({ a: [{ b: {} }] }, 3)).toBe(true);
  });

  it('handles a 100,000-level nesting without recursion', () => {
    const deep = JSON.parse('['.repeat(5_000) + ']'.repeat(5_000));
    expect(nestsDeeperThan(deep, 64)).toBe(true);
    let built: unknown = [];
    for (let level = 0; level < 100_000; level += 1) built = [built];
    expect(nestsDeeperThan(built, 64)).toBe(true);
    expect(nestsDeeperThan(built, 200_000)).toBe(false);
  });
});

describe('jsonShapeBeyond', () => {
  it('counts every object and array, the body itself included, and says which limit a body passes', () => {
    const body = { messages: [{ content: [{}, {}] }, { content: [] }] };
    // body, messages, two messages, two content arrays, two parts: 8.
    expect(jsonShapeBeyond(body, 64, 8)).toBeUndefined();
    expect(jsonShapeBeyond(body, 64, 7)).toBe('many');
    expect(jsonShapeBeyond(body, 3, 8)).toBe('deep');
    expect(jsonShapeBeyond('text', 1, 0)).toBeUndefined();
  });
});
