import { describe, expect, it } from 'vitest';
import { secretRedactor } from './secret-redactor.js';

describe('secretRedactor', () => {
  it('replaces every secret as written, JSON-escaped and URL-encoded, longest first', () => {
    const redact = secretRedactor(['sk-key-123', 'tenant "a"/b', 'sk-key-123-long', undefined, '']);
    expect(redact('Bearer sk-key-123-long and sk-key-123 twice sk-key-123')).toBe('Bearer [redacted] and [redacted] twice [redacted]');
    expect(redact('{"x-tenant":"tenant \\"a\\"/b"}')).toBe('{"x-tenant":"[redacted]"}');
    expect(redact('?t=tenant%20%22a%22%2Fb')).toBe('?t=[redacted]');
  });

  it('redacts the credential of a "Scheme credential" value, and leaves short values and the scheme alone', () => {
    const redact = secretRedactor(['Bearer tok-9f8e7d', 'abc']);
    expect(redact('got Bearer tok-9f8e7d, then tok-9f8e7d alone; abc stays')).toBe('got [redacted], then [redacted] alone; abc stays');
  });

  it('is the identity without secrets', () => {
    expect(secretRedactor([undefined])('anything')).toBe('anything');
  });
});
