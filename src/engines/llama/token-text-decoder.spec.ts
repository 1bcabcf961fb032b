import { describe, expect, it } from 'vitest';
import { TokenTextDecoder } from './token-text-decoder.js';

/** Tokens are byte values; like llama.cpp, a split character decodes to U+FFFD until complete. */
const bytes = (tokens: readonly number[]) => Buffer.from(tokens).toString('utf8');

describe('TokenTextDecoder', () => {
  it('holds back the bytes of a character split over tokens until it is complete', () => {
    const decoder = new TokenTextDecoder<number>((pending) => bytes(pending));
    const euro = [...Buffer.from('€')];
    expect(decoder.push(0x61)).toBe('a');
    expect(decoder.push(euro[0])).toBe('');
    expect(decoder.push(euro[1])).toBe('');
    expect(decoder.push(euro[2])).toBe('€');
  });

  it('releases an invalid sequence after four tokens instead of holding it forever', () => {
    const decoder = new TokenTextDecoder<number>((pending) => bytes(pending));
    expect([0xe2, 0xe2, 0xe2].map((token) => decoder.push(token))).toEqual(['', '', '']);
    expect(decoder.push(0xe2)).toBe('\uFFFD'.repeat(4));
  });

  it('gives the detokenizer the previous tokens, starting with the prompt, for spacing', () => {
    const seen: number[][] = [];
    const decoder = new TokenTextDecoder<number>(
      (pending, previous) => {
        seen.push([...previous]);
        return bytes(pending);
      },
      [1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
    decoder.push(0x61);
    decoder.push(0x62);
    expect(seen).toEqual([
      [2, 3, 4, 5, 6, 7, 8, 9],
      [3, 4, 5, 6, 7, 8, 9, 0x61],
    ]);
  });

  it('flushes what is pending at the end', () => {
    const decoder = new TokenTextDecoder<number>((pending) => bytes(pending));
    decoder.push(0xe2);
    expect(decoder.flush()).toBe('\uFFFD');
    expect(decoder.flush()).toBe('');
  });
});
