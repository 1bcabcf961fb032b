import { lastValueFrom, Subject, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { type EngineEvent, makeTimings, ZERO_USAGE } from '../engine/engine-event.js';
import { MAX_UNREPORTED, RunReport } from './run-report.js';

const text = (n: number): EngineEvent => ({ type: 'text', text: `t${n}` });
const DONE: EngineEvent = { type: 'done', finishReason: 'length', usage: { ...ZERO_USAGE, completionTokens: 2000 } };

describe('RunReport', () => {
  it('passes on what came before anyone listened, then what comes, and ends with the run', async () => {
    const report = new RunReport();
    const run = new Subject<EngineEvent>();
    report.tap(run).subscribe();
    run.next(text(1));
    const seen = lastValueFrom(report.events$.pipe(toArray()));
    run.next(text(2));
    run.next(DONE);
    run.complete();
    expect(await seen).toEqual([text(1), text(2), DONE]);
  });

  it('keeps a bounded number of early outputs, but always the latest usage and the finish', async () => {
    const report = new RunReport();
    const run = new Subject<EngineEvent>();
    report.tap(run).subscribe();
    for (let n = 0; n < MAX_UNREPORTED + 500; n += 1) run.next(text(n));
    const ack: EngineEvent = {
      type: 'ack',
      usage: { ...ZERO_USAGE, promptTokens: 7 },
      timings: makeTimings({ promptN: 7, promptMs: 1, predictedN: 0, predictedMs: 0 }),
    };
    run.next(ack);
    const seenMidway = lastValueFrom(report.events$.pipe(toArray()));
    run.next(DONE);
    run.complete();
    const seen = await seenMidway;
    // The first outputs, the latest usage, then the finish as it comes.
    expect(seen).toHaveLength(MAX_UNREPORTED + 2);
    expect(seen[MAX_UNREPORTED - 1]).toEqual(text(MAX_UNREPORTED - 1));
    expect(seen.slice(-2)).toEqual([ack, DONE]);
  });

  it('keeps the counters of an output piece it drops past the bound, as an ack', async () => {
    const report = new RunReport();
    const run = new Subject<EngineEvent>();
    report.tap(run).subscribe();
    for (let n = 0; n < MAX_UNREPORTED; n += 1) run.next(text(n));
    const usage = { ...ZERO_USAGE, promptTokens: 7, completionTokens: 1200 };
    const timings = makeTimings({ promptN: 7, promptMs: 1, predictedN: 1200, predictedMs: 900 });
    run.next({ type: 'text', text: 'late', usage, timings });
    const seen = lastValueFrom(report.events$.pipe(toArray()));
    run.complete();
    expect((await seen).at(-1)).toEqual({ type: 'ack', usage, timings });
  });

  it('ends a listener that comes after a failed run with the failure', async () => {
    const report = new RunReport();
    const run = new Subject<EngineEvent>();
    report.tap(run).subscribe({ error: () => undefined });
    run.error(new Error('engine down'));
    await expect(lastValueFrom(report.events$)).rejects.toThrow('engine down');
  });
});
