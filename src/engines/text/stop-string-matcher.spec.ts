import { describe, expect, it } from 'vitest';
import { StopStringMatcher } from './stop-string-matcher.js';

function feed(stops: string[], pieces: string[]) {
  const matcher = new StopStringMatcher(stops);
  let shown = '';
  for (const piece of pieces) {
    const { emit, stop } = matcher.push(piece);
    shown += emit;
    if (stop !== undefined) return { shown, stop };
  }
  return { shown: shown + matcher.flush(), stop: undefined };
}

describe('StopStringMatcher', () => {
  it('passes text through when there are no stop strings', () => {
    expect(feed([], ['Hello', ' world'])).toEqual({ shown: 'Hello world', stop: undefined });
  });

  it('stops at a stop string inside one piece and hides it', () => {
    expect(feed(['END'], ['abc END def'])).toEqual({ shown: 'abc ', stop: 'END' });
  });

  it('finds a stop string split across pieces without showing its first half', () => {
    const matcher = new StopStringMatcher(['</s>']);
    expect(matcher.push('text </')).toEqual({ emit: 'text ' });
    expect(matcher.push('s> more')).toEqual({ emit: '', stop: '</s>' });
  });

  it('releases held text once it can no longer start a stop string', () => {
    const matcher = new StopStringMatcher(['STOP']);
    expect(matcher.push('ST')).toEqual({ emit: '' });
    expect(matcher.push('AY')).toEqual({ emit: 'STAY' });
  });

  it('flushes held text at the end of the output', () => {
    expect(feed(['STOP'], ['go ST'])).toEqual({ shown: 'go ST', stop: undefined });
  });

  it('picks the earliest of several stop strings', () => {
    expect(feed(['world', 'lo'], ['hello world'])).toEqual({ shown: 'hel', stop: 'lo' });
  });

  it('handles a stop string spread over many one-character pieces', () => {
    expect(feed(['###'], ['a', '#', '#', '#', 'b'])).toEqual({ shown: 'a', stop: '###' });
  });
});
