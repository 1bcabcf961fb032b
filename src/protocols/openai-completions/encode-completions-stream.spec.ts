import { from, lastValueFrom, throwError, concat, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { EngineError } from '../../engine/engine-error.js';
import { ZERO_USAGE } from '../../engine/engine-event.js';
import type { StreamEvent } from '../../streaming/stream-event.js';
import { encodeCompletionsStream } from './encode-completions-stream.js';

const identity = { id: 'cmpl-1', model: 'coder', created: 7 };
const usage = { ...ZERO_USAGE, promptTokens: 3, completionTokens: 2 };
const frames = (events: StreamEvent[], includeUsage = false, failure?: Error) =>
  lastValueFrom(
    concat(from(events), failure ? throwError(() => failure) : from([])).pipe(
      encodeCompletionsStream({ ...identity, includeUsage }),
      toArray(),
    ),
  ).then((all) => all.map((frame) => ('data' in frame ? frame.data : frame.comment)));
const chunk = (text: string, finish: string | null = null) =>
  JSON.stringify({
    ...identity,
    object: 'text_completion',
    choices: [{ index: 0, text, logprobs: null, finish_reason: finish }],
  }).replace(
    '"id":"cmpl-1","model":"coder","created":7,"object":"text_completion"',
    '"id":"cmpl-1","object":"text_completion","created":7,"model":"coder"',
  );

describe('encodeCompletionsStream', () => {
  it('writes no opening frame, empty-text heartbeats, text chunks, the finish chunk, usage when asked, [DONE]', async () => {
    expect(
      await frames(
        [
          { type: 'accepted' },
          { type: 'heartbeat', n: 0 },
          { type: 'text', text: 'def', usage },
          { type: 'reasoning', text: 'hidden' },
          { type: 'text', text: ' add' },
          { type: 'done', finishReason: 'length', usage },
        ],
        true,
      ),
    ).toEqual([
      chunk(''),
      chunk('def'),
      chunk(' add'),
      chunk('', 'length'),
      '{"id":"cmpl-1","object":"text_completion","created":7,"model":"coder","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}',
      '[DONE]',
    ]);
  });

  it('reports a failure in-band, then [DONE]', async () => {
    const written = await frames(
      [{ type: 'text', text: 'a' }],
      false,
      new EngineError('upstream', 'The upstream failed.'),
    );
    expect(written.slice(1)).toEqual([expect.stringContaining('"message":"The upstream failed."'), '[DONE]']);
  });
});
