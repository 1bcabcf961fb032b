import { describe, expect, it } from 'vitest';
import { ReasoningCipher } from './reasoning-cipher.js';

const SECRET = 'a secret that is long enough for the configuration';

describe('ReasoningCipher', () => {
  it('opens what it sealed, and so does another cipher from the same secret (a restart, a replica)', () => {
    const text = 'Weigh the options: ünïcödé, emoji 🙂, and "quotes".';
    const blob = ReasoningCipher.fromSecret(SECRET).seal(text);
    expect(blob).not.toContain('Weigh');
    expect(ReasoningCipher.fromSecret(SECRET).open(blob)).toBe(text);
  });

  it('seals the same text differently each time (a fresh IV)', () => {
    const cipher = ReasoningCipher.fromSecret(SECRET);
    expect(cipher.seal('same')).not.toBe(cipher.seal('same'));
  });

  it('refuses a blob whose any one character was changed', () => {
    const cipher = ReasoningCipher.fromSecret(SECRET);
    const blob = cipher.seal('the reasoning');
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    for (let index = 0; index < blob.length; index += 1) {
      if (blob[index] === '=') continue;
      const other = alphabet[(alphabet.indexOf(blob[index]) + 1) % alphabet.length];
      expect(cipher.open(blob.slice(0, index) + other + blob.slice(index + 1)), `character ${index}`).toBeUndefined();
    }
  });

  it('refuses blobs from another key, a random key, or not from a gateway at all', () => {
    const blob = ReasoningCipher.fromSecret(SECRET).seal('the reasoning');
    expect(ReasoningCipher.fromSecret(`${SECRET}!`).open(blob)).toBeUndefined();
    expect(ReasoningCipher.fromSecret(undefined).open(blob)).toBeUndefined();
    const cipher = ReasoningCipher.fromSecret(SECRET);
    for (const foreign of [
      '',
      'gAAAAABoZ3xK',
      'not base64 at all!',
      Buffer.alloc(64, 1).toString('base64'),
      blob.slice(0, 20),
      `${blob}AAAA`,
      ` ${blob}`,
    ]) {
      expect(cipher.open(foreign), JSON.stringify(foreign)).toBeUndefined();
    }
  });

  it('binds a blob to the API key it was sealed for: another key cannot open it, the same key always can', () => {
    const cipher = ReasoningCipher.fromSecret(SECRET);
    const blob = cipher.forKey('key-aaaa').seal('the reasoning');
    expect(ReasoningCipher.fromSecret(SECRET).forKey('key-aaaa').open(blob)).toBe('the reasoning');
    expect(cipher.forKey('key-bbbb').open(blob)).toBeUndefined();
    // An open gateway is one scope, apart from every key's.
    expect(cipher.forKey('').open(blob)).toBeUndefined();
    expect(cipher.forKey('key-aaaa').open(cipher.forKey('').seal('open'))).toBeUndefined();
    expect(cipher.open(cipher.forKey('').seal('open'))).toBe('open');
  });

  it('makes a different random key for each cipher without a secret', () => {
    const blob = ReasoningCipher.fromSecret(undefined).seal('x');
    expect(ReasoningCipher.fromSecret(undefined).open(blob)).toBeUndefined();
  });
});
