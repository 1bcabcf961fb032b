import { Observable, Subject, firstValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { EngineEvent, TokenUsage } from '../engine/engine-event.js';
import type { GenerationRequest } from '../engine/generation-request.js';
import { choiceCount, choiceRequests, generateCompletion } from './completion-choices.js';

const request = (completion?: Partial<NonNullable<GenerationRequest['completion']>>): GenerationRequest => ({
  model: 'm',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'a\nb' }] }],
  tools: [],
  toolChoice: 'none',
  parallelToolCalls: false,
  sampling: { stop: [], seed: 5 },
  reasoning: { enabled: false },
  ...(completion === undefined ? {} : { completion: { prompt: 'a', extra: {}, ...completion } }),
});
const usage = (promptTokens: number, completionTokens: number): TokenUsage => ({
  promptTokens,
  completionTokens,
  cachedTokens: 0,
  reasoningTokens: 0,
});

describe('a completion with several choices', () => {
  it('counts prompts times n, and asks prompt by prompt with seeds apart', () => {
    const several = request({ prompts: ['a', 'b'], n: 2 });
    expect(choiceCount(several)).toBe(4);
    expect(choiceCount(request())).toBe(1);
    const each = choiceRequests(several);
    expect(each.map((one) => [one.completion?.prompt, one.sampling.seed, one.completion?.n])).toEqual([
      ['a', 5, undefined],
      ['a', 6, undefined],
      ['b', 5, undefined],
      ['b', 6, undefined],
    ]);
  });

  it('tags texts, accepts once all are accepted, sums usage with each prompt once, ends once', async () => {
    const runs: Array<Subject<EngineEvent>> = [];
    const events$ = generateCompletion(request({ prompts: ['a', 'b'], n: 2 }), () => {
      const run = new Subject<EngineEvent>();
      runs.push(run);
      return run;
    });
    const all = firstValueFrom(events$.pipe(toArray()));
    for (const run of runs) run.next({ type: 'accepted' });
    for (const [choice, run] of runs.entries()) {
      run.next({ type: 'text', text: `t${choice}`, usage: usage(choice < 2 ? 3 : 2, 1) });
      run.next({ type: 'done', finishReason: choice === 3 ? 'length' : 'stop', usage: usage(choice < 2 ? 3 : 2, 1) });
      run.complete();
    }
    const events = await all;
    expect(events.filter((event) => event.type === 'accepted')).toHaveLength(1);
    expect(events[0].type).toBe('accepted');
    expect(events.flatMap((event) => (event.type === 'text' ? [[event.choice, event.text]] : []))).toEqual([
      [0, 't0'],
      [1, 't1'],
      [2, 't2'],
      [3, 't3'],
    ]);
    const done = events.at(-1)!;
    expect(done).toMatchObject({ type: 'done', finishReason: 'stop', usage: usage(5, 4) });
    expect(done.type === 'done' && done.choices?.map((end) => end.finishReason)).toEqual([
      'stop',
      'stop',
      'stop',
      'length',
    ]);
  });

  it('fails as a whole when one choice fails, cancelling the others', async () => {
    const cancelled: number[] = [];
    const runs: Array<Subject<EngineEvent>> = [];
    const events$ = generateCompletion(request({ n: 3 }), () => {
      const run = new Subject<EngineEvent>();
      const choice = runs.push(run) - 1;
      return new Observable<EngineEvent>((subscriber) => {
        const inner = run.subscribe(subscriber);
        return () => {
          cancelled.push(choice);
          inner.unsubscribe();
        };
      });
    });
    const outcome = firstValueFrom(events$.pipe(toArray())).catch((error: unknown) => error);
    runs[1].error(new Error('boom'));
    expect(await outcome).toEqual(new Error('boom'));
    expect(cancelled.toSorted((a, b) => a - b)).toEqual([0, 1, 2]);
  });
});
