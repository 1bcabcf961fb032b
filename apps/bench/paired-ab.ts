/**
 * A paired A/B of two builds of Gantry on one machine: both gateways run side by side and take
 * turns under the same load, window after window, and each window's figure of B is divided by
 * the one of A next to it. On a shared machine whose load drifts by tens of percent between runs,
 * the median of those ratios moves by a few percent; figures from separate runs cannot.
 * `npm run bench -- --ab DIR` runs the whole set (paired-set.ts); this runs one pair:
 *
 *   npm run build && node dist/apps/bench/paired-ab.js --a /path/to/other/checkout [--b .]
 *     [--scenario streaming|per-token-streaming|paced-streaming|non-streaming|idle] [--engine stub|http] [--rounds 30]
 *     [--window-ms 500] [--concurrency 64] [--idle-streams 1000] [--floor]
 *     [--node-flags='--cpu-prof --cpu-prof-dir=DIR'] [--gateway-cpus 1]
 *
 * Each checkout must be built (`dist/`); the workers and the load are this checkout's. Streaming
 * reports gateway CPU µs per chunk (256-token answers; the mock writes them in bursts, or one per
 * write with per-token-streaming), non-streaming per request (16 tokens), idle the heap per open
 * stream after full collections (an endless prefill), no RSS noise. `--floor` (HTTP engine) adds
 * the bare proxy as a third side in every round, and each build's ratio to it.
 */
import { parseArgs } from 'node:util';
import { PAIRED_UNITS, runPaired, type PairedScenario } from './paired-run.js';
import { renderTable } from './text-table.js';

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: '.' },
    scenario: { type: 'string', default: 'streaming' },
    engine: { type: 'string', default: 'stub' },
    rounds: { type: 'string', default: '30' },
    'window-ms': { type: 'string', default: '500' },
    concurrency: { type: 'string', default: '64' },
    'idle-streams': { type: 'string', default: '1000' },
    'node-flags': { type: 'string', default: '' },
    'gateway-cpus': { type: 'string' },
    floor: { type: 'boolean', default: false },
  },
});
const scenario = values.scenario as PairedScenario;
if (values.a === undefined || !(scenario in PAIRED_UNITS) || !['stub', 'http'].includes(values.engine!)) {
  process.stderr.write(
    'Usage: node dist/apps/bench/paired-ab.js --a DIR [--b DIR] [--scenario streaming|per-token-streaming|paced-streaming|non-streaming|idle] [--engine stub|http] [--rounds N] [--window-ms MS] [--concurrency N] [--idle-streams N] [--floor] [--node-flags=FLAGS] [--gateway-cpus LIST]\n',
  );
  process.exit(2);
}
const options = {
  a: values.a,
  b: values.b!,
  scenario,
  engine: values.engine as 'stub' | 'http',
  rounds: Number(values.rounds),
  windowMs: Number(values['window-ms']),
  concurrency: Number(values.concurrency),
  idleStreams: Number(values['idle-streams']),
  nodeFlags: values['node-flags']!.split(' ').filter(Boolean),
  ...(values['gateway-cpus'] !== undefined ? { gatewayCpus: values['gateway-cpus'] } : {}),
  floor: values.floor,
};
const summary = await runPaired(options);
const digits = scenario === 'idle' ? 0 : 3;
const span = scenario === 'idle' ? ` of ${options.idleStreams} streams` : ` of ${options.windowMs} ms`;
process.stdout.write(
  `Paired A/B, ${scenario}, ${options.engine} engine, ${options.rounds} rounds${span}: ${PAIRED_UNITS[scenario]}\n`,
);
process.stdout.write(`A: ${options.a}\nB: ${options.b}\n\n`);
process.stdout.write(
  `${renderTable(
    ['', 'median', 'min', 'max'],
    [
      ['A', summary.a.median.toFixed(digits), summary.a.min.toFixed(digits), summary.a.max.toFixed(digits)],
      ['B', summary.b.median.toFixed(digits), summary.b.min.toFixed(digits), summary.b.max.toFixed(digits)],
    ],
  )}\n\nB / A, round by round: median ${summary.ratio.median.toFixed(3)}, quartiles ${summary.ratio.q1.toFixed(3)} to ${summary.ratio.q3.toFixed(3)}\n`,
);
for (const [side, ratio] of summary.floor
  ? ([
      ['A', summary.floor.a],
      ['B', summary.floor.b],
    ] as const)
  : []) {
  process.stdout.write(
    `${side} / bare proxy, round by round: median ${ratio.median.toFixed(3)}, quartiles ${ratio.q1.toFixed(3)} to ${ratio.q3.toFixed(3)}\n`,
  );
}
process.exit(0);
