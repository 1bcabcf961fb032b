/**
 * Heap held per idle stream by keepalive(): N subscriptions to a source that never emits, each
 * with its beat timer armed, measured after a full GC. Compares the operator in src with two
 * references kept here: the hand-written operator it replaced, and a plain `connect` composition.
 *
 *   npm run build && node --expose-gc dist/apps/bench/keepalive-heap.js [--streams 10000] [--interval-ms 15000] [--rounds 3]
 */
import { parseArgs } from 'node:util';
import {
  asyncScheduler,
  connect,
  filter,
  interval,
  map,
  merge,
  Observable,
  takeUntil,
  type OperatorFunction,
  type SchedulerAction,
  type Subscription,
} from 'rxjs';
import { keepalive, type KeepaliveOptions } from '../../src/streaming/keepalive.js';
import { renderTable } from './text-table.js';

type Event = { type: 'ack' | 'out' };
type Operator = (options: KeepaliveOptions<Event, string>) => OperatorFunction<Event, Event | string>;

/** The hand-written operator keepalive() was before it became a composition: one subscriber, one rescheduled action. */
const handWritten: Operator = (options) => (source) =>
  new Observable<Event | string>((subscriber) => {
    let count = 0;
    let beats: Subscription | undefined = asyncScheduler.schedule(function (this: SchedulerAction<unknown>) {
      subscriber.next(options.beat(count++));
      this.schedule(undefined, options.intervalMs);
    }, options.intervalMs);
    const stopBeats = () => {
      beats?.unsubscribe();
      beats = undefined;
    };
    const subscription = source.subscribe({
      next: (value) => {
        if (beats !== undefined && options.isOutput(value)) stopBeats();
        subscriber.next(value);
      },
      error: (error: unknown) => {
        stopBeats();
        subscriber.error(error);
      },
      complete: () => {
        stopBeats();
        subscriber.complete();
      },
    });
    return () => {
      stopBeats();
      subscription.unsubscribe();
    };
  });

/** The plain composition, for its memory only: it never ends the beats when the source completes without output. */
const plainComposition: Operator = (options) => (source) =>
  source.pipe(
    connect((shared) =>
      merge(
        shared,
        interval(options.intervalMs).pipe(map(options.beat), takeUntil(shared.pipe(filter(options.isOutput)))),
      ),
    ),
  );

const OPERATORS: readonly (readonly [string, Operator])[] = [
  ['hand-written (before)', handWritten],
  ['connect + merge + interval + map + takeUntil(filter)', plainComposition],
  ['keepalive() in src', (options) => keepalive(options)],
];

interface Figures {
  /** Heap held per subscription, in bytes. */
  held: number;
  /** Heap left per subscription once all are unsubscribed, in bytes: a leak shows here. */
  left: number;
}

function heapAfterGc(gc: () => void): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

function measure(operator: Operator, streams: number, intervalMs: number, gc: () => void): Figures {
  const options: KeepaliveOptions<Event, string> = {
    intervalMs,
    isOutput: (event) => event.type === 'out',
    beat: () => 'beat',
  };
  const source = new Observable<Event>(() => () => {});
  const observer = { next: () => {}, error: () => {}, complete: () => {} };
  // Warm up: compiled code and one-time allocations are not per stream.
  for (let i = 0; i < 1_000; i++) source.pipe(operator(options)).subscribe(observer).unsubscribe();
  const before = heapAfterGc(gc);
  const subscriptions: Subscription[] = [];
  for (let i = 0; i < streams; i++) subscriptions[i] = source.pipe(operator(options)).subscribe(observer);
  const held = heapAfterGc(gc);
  for (const subscription of subscriptions) subscription.unsubscribe();
  subscriptions.length = 0;
  const left = heapAfterGc(gc);
  return { held: (held - before) / streams, left: (left - before) / streams };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function main(): number {
  const { values } = parseArgs({
    options: {
      streams: { type: 'string', default: '10000' },
      'interval-ms': { type: 'string', default: '15000' },
      rounds: { type: 'string', default: '3' },
    },
  });
  const streams = Number(values.streams);
  const intervalMs = Number(values['interval-ms']);
  const rounds = Number(values.rounds);
  if (![streams, intervalMs, rounds].every((n) => Number.isInteger(n) && n > 0)) {
    process.stderr.write('--streams, --interval-ms and --rounds take positive integers\n');
    return 2;
  }
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) {
    process.stderr.write('Run with node --expose-gc: the figures are taken after a full GC.\n');
    return 2;
  }

  const results = OPERATORS.map(() => [] as Figures[]);
  for (let round = 0; round < rounds; round++) {
    OPERATORS.forEach(([, operator], i) => results[i].push(measure(operator, streams, intervalMs, gc)));
  }
  const baseline = median(results[0].map((figures) => figures.held));
  const rows = OPERATORS.map(([name], i) => {
    const held = median(results[i].map((figures) => figures.held));
    const left = median(results[i].map((figures) => figures.left));
    return [name, Math.round(held), Math.round(held - baseline), Math.round(left)];
  });
  process.stdout.write(
    `keepalive(): heap per idle subscription, ${streams} subscriptions, ${intervalMs} ms interval, median of ${rounds} rounds\n\n`,
  );
  process.stdout.write(
    `${renderTable(['operator', 'bytes held', 'vs hand-written', 'bytes left after unsubscribe'], rows)}\n`,
  );
  return 0;
}

process.exitCode = main();
