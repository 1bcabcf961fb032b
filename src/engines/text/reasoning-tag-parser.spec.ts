import { describe, expect, it } from 'vitest';
import { ReasoningTagParser, type ReasoningTagOptions } from './reasoning-tag-parser.js';

function split(pieces: string[], options?: ReasoningTagOptions) {
  const parser = new ReasoningTagParser(options);
  const perPiece = pieces.map((piece) => parser.push(piece));
  const all = [...perPiece.flat(), ...parser.flush()];
  const join = (type: string) =>
    all
      .filter((piece) => piece.type === type)
      .map((piece) => piece.text)
      .join('');
  return { reasoning: join('reasoning'), text: join('text'), perPiece, all };
}

describe('ReasoningTagParser', () => {
  it('passes text without tags through untouched', () => {
    expect(split(['Hello', ' world\n'])).toMatchObject({ reasoning: '', text: 'Hello world\n' });
  });

  it('splits reasoning from the answer and trims the line breaks around the tags', () => {
    const result = split(['<think>\nweigh it up\n</think>\n\nThe answer.']);
    expect(result).toMatchObject({ reasoning: 'weigh it up', text: 'The answer.' });
    expect(result.all.map((piece) => piece.type)).toEqual(['reasoning', 'text']);
  });

  it('recognises tags split across tokens without showing any part of them', () => {
    const pieces = ['<', 'th', 'ink', '>', 'step', ' one', '</', 'thi', 'nk>', 'done'];
    const result = split(pieces);
    expect(result).toMatchObject({ reasoning: 'step one', text: 'done' });
    expect(result.all.some((piece) => piece.text.includes('<') || piece.text.includes('>'))).toBe(false);
    // The pieces that could still be a tag produce nothing: an ack without a delta.
    expect(result.perPiece.slice(0, 4).flat()).toEqual([]);
  });

  it('releases held text once it cannot be a tag', () => {
    const parser = new ReasoningTagParser();
    expect(parser.push('a <th')).toEqual([{ type: 'text', text: 'a ' }]);
    expect(parser.push('ought>')).toEqual([{ type: 'text', text: '<thought>' }]);
  });

  it('starts inside the reasoning when the prompt opened the tag', () => {
    expect(split(['plan', '</think>', 'answer'], { startInside: true })).toMatchObject({
      reasoning: 'plan',
      text: 'answer',
    });
  });

  it('keeps an unclosed reasoning as reasoning at the end', () => {
    expect(split(['<think>still going\n'])).toMatchObject({ reasoning: 'still going', text: '' });
  });
});
