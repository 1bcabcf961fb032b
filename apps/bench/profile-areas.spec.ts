import { describe, expect, it } from 'vitest';
import { areaOf, summarizeCpuProfile, summarizeGcTrace, summarizeHeapProfile } from './profile-areas.js';

const frame = (functionName: string, url: string, lineNumber = 0) => ({ functionName, url, lineNumber });

describe('areaOf', () => {
  it('names packages, Gantry folders, parts of Node and native code', () => {
    expect(areaOf(frame('_parse', 'file:///w/node_modules/secure-json-parse/index.js'))).toBe('secure-json-parse');
    expect(areaOf(frame('emit', 'file:///w/node_modules/@nestjs/core/x.js'))).toBe('@nestjs/core');
    expect(areaOf(frame('plan', 'file:///w/dist/src/engines/http/http-engine.js'))).toBe('gantry engines/http');
    expect(areaOf(frame('accept', 'file:///w/dist/src/generation/generation.service.js'))).toBe('gantry generation');
    expect(areaOf(frame('forward', 'file:///w/dist/apps/bench/bare-proxy-app.js'))).toBe('apps bench');
    expect(areaOf(frame('decode', 'node:internal/encoding'))).toBe('node:encoding');
    expect(areaOf(frame('emit', 'node:events'))).toBe('node:events');
    expect(areaOf(frame('(garbage collector)', ''))).toBe('gc');
    expect(areaOf(frame('writev', ''))).toBe('native writev');
    expect(areaOf(frame('', ''))).toBe('native');
  });
});

describe('summarizeCpuProfile', () => {
  it('adds self time by area and function, without idle samples or the skipped start', () => {
    const profile = {
      nodes: [
        { id: 1, callFrame: frame('(idle)', '') },
        { id: 2, callFrame: frame('(garbage collector)', '') },
        { id: 3, callFrame: frame('plan', 'file:///w/dist/src/engines/http/http-engine.js', 112) },
      ],
      samples: [3, 3, 1, 2, 3],
      timeDeltas: [1000, 1000, 5000, 1000, 1000],
    };
    const summary = summarizeCpuProfile(profile, 1.5);
    expect(summary.busyMs).toBe(3);
    expect(summary.areas).toStrictEqual([
      { name: 'gantry engines/http', ms: 2, share: 2 / 3 },
      { name: 'gc', ms: 1, share: 1 / 3 },
    ]);
    expect(summary.functions[0].name).toBe('plan src/engines/http/http-engine.js:113');
  });
});

describe('summarizeHeapProfile', () => {
  it('adds bytes by area over the whole tree', () => {
    const node = (functionName: string, url: string, selfSize: number, children: never[] = []) => ({
      callFrame: { functionName, url },
      selfSize,
      children,
    });
    const head = {
      ...node('(root)', '', 0),
      children: [
        node('a', 'node:buffer', 10),
        { ...node('b', 'file:///w/node_modules/pino/x.js', 5), children: [node('c', 'node:buffer', 7)] },
      ],
    };
    expect(summarizeHeapProfile(head as never)).toStrictEqual([
      { name: 'node:buffer', bytes: 17 },
      { name: 'pino', bytes: 5 },
      { name: 'native', bytes: 0 },
    ]);
  });
});

describe('summarizeGcTrace', () => {
  it('totals the scavenges and mark-compacts of a --trace-gc-nvp log, among other lines', () => {
    const log = [
      '{"level":30,"msg":"request completed"}',
      '[1:0x1]  5844 ms: pause=15.5 mutator=241.9 gc=s reduce_memory=0 scavenge=15.29 background.scavenge.parallel=27.78 allocated=17645464 promoted=3353144 new_space_survived=3102968',
      '[1:0x1]  5990 ms: pause=4.5 mutator=100.0 gc=s background.scavenge.parallel=2.22 allocated=2354536 promoted=646856 new_space_survived=897032',
      '[1:0x1]  7482 ms: pause=7.9 mutator=133.1 gc=mc reduce_memory=0',
      '[1:0x1]  7400 ms: Scavenge 39.8 (59.1) -> 15.8 (46.9) MB, 5.11 / 0.00 ms',
    ].join('\n');
    const gc = summarizeGcTrace(log);
    expect(gc).toMatchObject({ scavenges: 2, markCompacts: 1 });
    expect(gc.pauseMs).toBeCloseTo(27.9);
    expect(gc.backgroundScavengeMs).toBeCloseTo(30);
    expect(gc.allocatedMb).toBeCloseTo(20);
    expect(gc.promotedMb).toBeCloseTo(4);
    expect(gc.survivedMb).toBeCloseTo(4);
  });
});
