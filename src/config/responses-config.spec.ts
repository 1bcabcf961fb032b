import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from './config-loader.js';

function problemsOf(raw: unknown): string[] {
  try {
    parseConfig(raw);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('the responses section', () => {
  it('is optional: without it there is no encryption key (a random one is made at start)', () => {
    expect(parseConfig({}).responses.encryptionKey).toBeUndefined();
  });

  it('takes an encryption key of at least 32 characters', () => {
    const key = 'n2Vf0c0M1kq3bqkO5xR3b1m4sQmR7yYzq0Xc8wq3E1g=';
    expect(parseConfig({ responses: { encryptionKey: key } }).responses.encryptionKey).toBe(key);
  });

  it('refuses a short key or an unknown field, without echoing the key', () => {
    const problems = problemsOf({ responses: { encryptionKey: 'short-secret', store: 'maybe' } });
    expect(problems.join('\n')).toMatch(/encryptionKey must be at least 32 characters/);
    expect(problems.join('\n')).toMatch(/responses\.store/);
    expect(problems.join('\n')).not.toContain('short-secret');
  });
});
