import { describe, expect, it } from 'vitest';
import { secretRedactor } from './secret-redactor.js';

const KEY = 'sk-up/key+8d1e=é';
const redact = secretRedactor([KEY]);
const percentLower = (text: string) =>
  encodeURIComponent(text).replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
const everyCharacterEscaped = (text: string, hex: (code: string) => string) =>
  [...text].map((character) => `\\u${hex(character.charCodeAt(0).toString(16).padStart(4, '0'))}`).join('');

describe('secretRedactor', () => {
  it('replaces every secret as written, JSON-escaped and URL-encoded, longest first', () => {
    const several = secretRedactor(['sk-key-123', 'tenant "a"/b', 'sk-key-123-long', undefined, '']);
    expect(several('Bearer sk-key-123-long and sk-key-123 twice sk-key-123')).toBe(
      'Bearer [redacted] and [redacted] twice [redacted]',
    );
    expect(several('{"x-tenant":"tenant \\"a\\"/b"}')).toBe('{"x-tenant":"[redacted]"}');
    expect(several('?t=tenant%20%22a%22%2Fb')).toBe('?t=[redacted]');
    expect(several('?t=tenant+%22a%22%2fb')).toBe('?t=[redacted]');
  });

  it('redacts the credential of a "Scheme credential" value, and leaves short values and the scheme alone', () => {
    const scheme = secretRedactor(['Bearer tok-9f8e7d', 'abc']);
    expect(scheme('got Bearer tok-9f8e7d, then tok-9f8e7d alone; abc stays')).toBe(
      'got [redacted], then [redacted] alone; abc stays',
    );
  });

  it('redacts each JSON spelling: escaped slashes, \\uXXXX in either case, escaped again inside JSON', () => {
    const slashes = JSON.stringify(KEY).slice(1, -1).replaceAll('/', '\\/');
    expect(slashes).toContain('\\/');
    expect(redact(`{"key":"${slashes}"}`)).toBe('{"key":"[redacted]"}');
    expect(redact(`"${everyCharacterEscaped(KEY, (hex) => hex)}"`)).toBe('"[redacted]"');
    expect(redact(`"${everyCharacterEscaped(KEY, (hex) => hex.toUpperCase())}"`)).toBe('"[redacted]"');
    expect(redact(JSON.stringify(JSON.stringify({ key: KEY })))).not.toContain('key+8d1e');
    expect(redact(JSON.stringify(JSON.stringify({ key: slashes })))).toBe('"{\\"key\\":\\"[redacted]\\"}"');
  });

  it('redacts percent-encoding in either case', () => {
    expect(redact(`?k=${encodeURIComponent(KEY)}&x=1`)).toBe('?k=[redacted]&x=1');
    expect(redact(`?k=${percentLower(KEY)}&x=1`)).toBe('?k=[redacted]&x=1');
    // Every byte encoded, unreserved characters too.
    const allBytes = [...Buffer.from(KEY, 'utf8')].map((byte) => `%${byte.toString(16)}`).join('');
    expect(redact(`k=${allBytes}`)).toBe('k=[redacted]');
  });

  it('redacts base64 and base64url, alone or inside a longer encoded text at any alignment', () => {
    for (const encoding of ['base64', 'base64url'] as const) {
      // The last character and the padding also carry bits of what follows: they may stay.
      expect(redact(`token ${Buffer.from(KEY).toString(encoding)} end`), encoding).toMatch(
        /^token \[redacted\].{0,3} end$/,
      );
      for (const before of ['', 'u', 'us', 'user:', 'Bearer ']) {
        const encoded = Buffer.from(`${before}${KEY}`).toString(encoding);
        const redacted = redact(`Basic ${encoded}`);
        expect(redacted, `${encoding} after ${JSON.stringify(before)}`).toContain('[redacted]');
        // What is left of the encoding holds at most the few bits shared with its neighbours.
        expect(redacted.replace('Basic ', '').replace('[redacted]', '').length).toBeLessThanOrEqual(
          Math.ceil((before.length * 8) / 6) + 4,
        );
      }
    }
  });

  it('leaves other text alone', () => {
    const text = 'The upstream answered 400: prompt is too long (sk-up is a prefix, key+8 another).';
    expect(redact(text)).toBe(text);
  });

  it('is the identity without secrets', () => {
    expect(secretRedactor([undefined])('anything')).toBe('anything');
  });
});
