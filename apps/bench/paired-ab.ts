/**
 * A paired A/B of two builds of Gantry on one machine: both gateways run side by side and take
 * turns under the same load, window after window, and each window's figure of B is divided by
 * the one of A next to it. On a shared machine whose load drifts by tens of percent between runs,
 * the median of those ratios moves by a few percent; figures from separate runs cannot.
 *
 *   npm run build && node dist/apps/bench/paired-ab.js --a /path/to/other/checkout [--b .]
 *     [--scenario streaming|non-streaming|idle] [--engine stub|http] [--rounds 30] [--window-ms 500]
 *     [--concurrency 64] [--idle-streams 1000] [--node-flags '--cpu-prof --cpu-prof-dir=DIR']
 *
 * Each checkout must be built (`dist/`); the workers and the load are this checkout's. Streaming
 * reports gateway CPU µs per chunk (256-token answers), non-streaming per request (16 tokens),
 * idle the heap per open stream after full collections (an endless prefill), no RSS noise.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request, Agent, type IncomingMessage } from 'node:http';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { startMockUpstream } from '../mock-upstream/mock-upstream.js';
import { chatBody } from './gateway-configs.js';
import { pairedSummary, type PairedSummary } from './paired-summary.js';
import { renderTable } from './text-table.js';

type Scenario = 'streaming' | 'non-streaming' | 'idle';

interface Worker {
  label: string;
  child: ChildProcess;
  port: number;
  agent: Agent;
  ask(command: string): Promise<Record<string, number>>;
}

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
  },
});
const scenario = values.scenario as Scenario;
if (values.a === undefined || !['streaming', 'non-streaming', 'idle'].includes(scenario) || !['stub', 'http'].includes(values.engine!)) {
  process.stderr.write('Usage: node dist/apps/bench/paired-ab.js --a DIR [--b DIR] [--scenario streaming|non-streaming|idle] [--engine stub|http] [--rounds N] [--window-ms MS] [--concurrency N] [--idle-streams N]\n');
  process.exit(2);
}
const rounds = Number(values.rounds);
const windowMs = Number(values['window-ms']);
const concurrency = Number(values.concurrency);
const idleStreams = Number(values['idle-streams']);
const nodeFlags = values['node-flags']!.split(' ').filter(Boolean);
const model = values.engine === 'http' ? 'mock' : 'stub';

const mock = values.engine === 'http' ? await startMockUpstream({ port: 0, host: '127.0.0.1' }) : undefined;
const workerScript = fileURLToPath(new URL('./paired-ab-worker.js', import.meta.url));

async function startWorker(label: string, root: string): Promise<Worker> {
  const flags = [...(scenario === 'idle' ? ['--expose-gc'] : []), ...nodeFlags];
  const child = spawn(process.execPath, [...flags, workerScript, root, ...(mock ? [mock.url] : [])], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => JSON.parse((await lines.next()).value as string) as Record<string, number>;
  const { port } = await next();
  const ask = (command: string) => {
    child.stdin!.write(`${command}\n`);
    return next();
  };
  return { label, child, port, agent: new Agent({ keepAlive: true, maxSockets: Math.max(concurrency, idleStreams) }), ask };
}

/** POSTs a chat body; resolves with the response once its head arrived. */
function post(worker: Worker, body: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const sent = request(
      { host: '127.0.0.1', port: worker.port, path: '/v1/chat/completions', method: 'POST', agent: worker.agent, headers: { 'content-type': 'application/json' } },
      resolve,
    );
    sent.on('error', reject);
    sent.end(body);
  });
}

/** Units of one exchange: SSE data frames for a stream, 1 for a request. */
async function exchange(worker: Worker, body: string, stream: boolean): Promise<number> {
  const response = await post(worker, body);
  let frames = 0;
  let tail = '';
  response.setEncoding('utf8');
  for await (const text of response as AsyncIterable<string>) {
    if (!stream) continue;
    // A frame's `data: ` may straddle two reads: count on the joined text.
    const joined = tail + text;
    for (let at = joined.indexOf('data: '); at !== -1; at = joined.indexOf('data: ', at + 1)) frames += 1;
    tail = joined.slice(-5);
  }
  return stream ? frames : 1;
}

/** Closed-loop load for `ms`: `concurrency` clients, each sending its next exchange when one ends. */
async function load(worker: Worker, ms: number): Promise<number> {
  const stream = scenario === 'streaming';
  const body = chatBody(model, stream ? 256 : 16, stream);
  const end = performance.now() + ms;
  let units = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const done = await exchange(worker, body, stream);
        units += done;
      }
    }),
  );
  return units;
}

/** Gateway CPU µs per unit over one window of load. */
async function cpuWindow(worker: Worker): Promise<number> {
  await worker.ask('start');
  const units = await load(worker, windowMs);
  const { cpuMicros } = await worker.ask('stop');
  return cpuMicros / units;
}

/** Heap bytes per idle stream, with `idleStreams` open and waiting on an endless prefill. */
async function idleWindow(worker: Worker): Promise<number> {
  const { heapUsed: before } = await worker.ask('heap');
  const body = chatBody(`${model}-idle`, 16, true);
  const responses = await Promise.all(
    Array.from({ length: idleStreams }, async () => {
      const response = await post(worker, body);
      // The opening frame has left: the stream is accepted and waits on its prefill.
      await new Promise((resolve) => response.once('data', resolve));
      return response;
    }),
  );
  const { heapUsed: after } = await worker.ask('heap');
  for (const response of responses) response.destroy();
  await new Promise((settle) => setTimeout(settle, 500));
  return (after - before) / idleStreams;
}

const workers = [await startWorker('A', values.a!), await startWorker('B', values.b!)];
const measure = scenario === 'idle' ? idleWindow : cpuWindow;
// Unmeasured first: connections, JIT, and the first stored state of each gateway.
for (const worker of workers) await (scenario === 'idle' ? idleWindow(worker) : load(worker, 1500));
const figures: [number[], number[]] = [[], []];
for (let round = 0; round < rounds; round += 1) {
  // A then B, then B then A: neither side always follows the other.
  for (const index of round % 2 === 0 ? [0, 1] : [1, 0]) figures[index].push(await measure(workers[index]));
}
for (const worker of workers) {
  await worker.ask('quit').catch(() => undefined);
  worker.agent.destroy();
}
await mock?.close();

const summary: PairedSummary = pairedSummary(figures[0], figures[1]);
const unit = scenario === 'idle' ? 'heap bytes per idle stream' : scenario === 'streaming' ? 'gateway CPU µs per chunk' : 'gateway CPU µs per request';
const digits = scenario === 'idle' ? 0 : 3;
process.stdout.write(`Paired A/B, ${scenario}, ${values.engine} engine, ${rounds} rounds${scenario === 'idle' ? ` of ${idleStreams} streams` : ` of ${windowMs} ms`}: ${unit}\n`);
process.stdout.write(`A: ${values.a}\nB: ${values.b}\n\n`);
process.stdout.write(
  `${renderTable(
    ['', 'median', 'min', 'max'],
    [
      ['A', summary.a.median.toFixed(digits), summary.a.min.toFixed(digits), summary.a.max.toFixed(digits)],
      ['B', summary.b.median.toFixed(digits), summary.b.min.toFixed(digits), summary.b.max.toFixed(digits)],
    ],
  )}\n\nB / A, round by round: median ${summary.ratio.median.toFixed(3)}, quartiles ${summary.ratio.q1.toFixed(3)} to ${summary.ratio.q3.toFixed(3)}\n`,
);
process.exit(0);
