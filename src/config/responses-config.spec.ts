import { describe, expect, it } from 'vitest';
import { configProblemsOf } from '../../test/support/config-problems.js';
import { parseConfig } from './config-loader.js';


describe('the responses section', () => {
  it('is optional: without it there is no encryption key (a random one is made at start)', () => {
    expect(parseConfig({}).responses.encryptionKey).toBeUndefined();
  });

  it('takes an encryption key of at least 32 characters', () => {
    const key = 'n2Vf0c0M1kq3bqkO5xR3b1m4sQmR7yYzq0Xc8wq3E1g=';
    expect(parseConfig({ responses: { encryptionKey: key } }).responses.encryptionKey).toBe(key);
  });

  it('refuses a short key or an unknown field, without echoing the key', () => {
    const problems = configProblemsOf({ responses: { encryptionKey: 'short-secret', store: 'maybe' } });
    expect(problems.join('\n')).toMatch(/encryptionKey must be at least 32 characters/);
    expect(problems.join('\n')).toMatch(/responses\.store/);
    expect(problems.join('\n')).not.toContain('short-secret');
  });
});
