/**
 * One paired A/B (see paired-ab.ts): two builds of Gantry side by side as two gateway processes
 * (paired-ab-worker.ts), taking turns under the same closed-loop load, window after window; each
 * round's figure of B is divided by A's next to it. With `floor`, the bare proxy takes its turn
 * in every round too, and each build's figure is also divided by the floor's of the same round.
 * Used by `paired-ab.js` and `npm run bench -- --ab`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { request, Agent, type IncomingMessage } from 'node:http';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { startMockUpstream } from '../mock-upstream/mock-upstream.js';
import { benchModels, chatBody } from './gateway-configs.js';
import { pairedSummary, ratioSummary, type PairedSummary } from './paired-summary.js';

/**
 * `streaming`: the mock writes its chunks in bursts (many to a socket read); `per-token-streaming`:
 * one chunk per write, as an engine sends each token as it is made (HTTP engine only).
 */
export type PairedScenario = 'streaming' | 'per-token-streaming' | 'paced-streaming' | 'non-streaming' | 'idle';

export interface PairedRunOptions {
  /** Checkouts with a built `dist/`: A (before) and B (after). */
  a: string;
  b: string;
  scenario: PairedScenario;
  engine: 'stub' | 'http';
  rounds: number;
  windowMs: number;
  concurrency: number;
  idleStreams: number;
  /** Extra node flags for both gateways (`--cpu-prof --cpu-prof-dir=DIR`). */
  nodeFlags: readonly string[];
  /** CPUs the gateways run on (`taskset -c`), away from the load's, so neither disturbs the other's figures. */
  gatewayCpus?: string;
  /** The bare proxy as a third side, each round (HTTP engine, CPU scenarios only). */
  floor?: boolean;
}

/** A paired run's figures; with a floor, each build's per-round ratio to the bare proxy. */
export interface PairedResult extends PairedSummary {
  floor?: { a: RatioSummary; b: RatioSummary };
}

type RatioSummary = PairedSummary['ratio'];

/** What a paired figure measures, by scenario. */
export const PAIRED_UNITS: Record<PairedScenario, string> = {
  streaming: 'gateway CPU µs per chunk',
  'per-token-streaming': 'gateway CPU µs per chunk',
  'paced-streaming': 'gateway CPU µs per chunk',
  'non-streaming': 'gateway CPU µs per request',
  idle: 'heap bytes per idle stream',
};

interface Worker {
  child: ChildProcess;
  port: number;
  agent: Agent;
  /** The bare proxy passes the mock's behaviour on as a header, which the gateways' model has in its configuration. */
  headers: Record<string, string>;
  ask(command: string): Promise<Record<string, number>>;
}

/** Every order of three sides, taken in turn: no side always follows another. */
const ORDERS_OF_THREE = [
  [0, 1, 2],
  [1, 2, 0],
  [2, 0, 1],
  [0, 2, 1],
  [2, 1, 0],
  [1, 0, 2],
];

const WORKER_SCRIPT = fileURLToPath(new URL('./paired-ab-worker.js', import.meta.url));

/**
 * Streaming: gateway CPU µs per chunk (256-token answers as fast as they go, the mock's chunks in
 * bursts or one per write); paced streaming: per chunk of 64-token answers 10 ms apart;
 * non-streaming: per request (16 tokens); idle: the heap per open stream after full collections
 * (an endless prefill).
 */
export async function runPaired(options: PairedRunOptions): Promise<PairedResult> {
  const { scenario, rounds, windowMs, concurrency, idleStreams } = options;
  const perToken = scenario === 'per-token-streaming';
  if ((perToken || options.floor) && options.engine !== 'http')
    throw new Error(`${perToken ? scenario : 'a floor'} needs the HTTP engine`);
  if (options.floor && scenario === 'idle') throw new Error('the floor is measured in CPU scenarios only');
  const mock = options.engine === 'http' ? await startMockUpstream({ port: 0, host: '127.0.0.1' }) : undefined;
  const family = options.engine === 'stub' ? 'stub' : perToken ? 'mock-per-token' : 'mock';
  const model = scenario === 'paced-streaming' ? `${family}-paced` : scenario === 'idle' ? `${family}-idle` : family;
  const modelHeaders = (benchModels(mock?.url ?? '').find((entry) => entry.name === model)?.headers ?? {}) as Record<
    string,
    string
  >;

  async function startWorker(root: string | undefined): Promise<Worker> {
    const flags = [...(scenario === 'idle' ? ['--expose-gc'] : []), ...(root === undefined ? [] : options.nodeFlags)];
    const side = root === undefined ? ['--bare', mock!.url] : [root, ...(mock ? [mock.url] : [])];
    const command = [process.execPath, ...flags, WORKER_SCRIPT, ...side];
    const pinned = options.gatewayCpus !== undefined ? ['taskset', '-c', options.gatewayCpus, ...command] : command;
    const child = spawn(pinned[0], pinned.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const next = async () => JSON.parse((await lines.next()).value as string) as Record<string, number>;
    const { port } = await next();
    const ask = (command: string) => {
      child.stdin!.write(`${command}\n`);
      return next();
    };
    const agent = new Agent({ keepAlive: true, maxSockets: Math.max(concurrency, idleStreams) });
    return { child, port, agent, headers: root === undefined ? modelHeaders : {}, ask };
  }

  /** POSTs a chat body; resolves with the response once its head arrived. */
  function post(worker: Worker, body: string): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const sent = request(
        {
          host: '127.0.0.1',
          port: worker.port,
          path: '/v1/chat/completions',
          method: 'POST',
          agent: worker.agent,
          headers: { 'content-type': 'application/json', ...worker.headers },
        },
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
    const paced = scenario === 'paced-streaming';
    const stream = scenario !== 'non-streaming';
    // Paced: 64 tokens 10 ms apart, as a model writes them (one chunk per write); else as fast as they go.
    const body = chatBody(model, paced ? 64 : stream ? 256 : 16, stream);
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
    const body = chatBody(model, 16, true);
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

  const workers = [
    await startWorker(options.a),
    await startWorker(options.b),
    ...(options.floor ? [await startWorker(undefined)] : []),
  ];
  const measure = scenario === 'idle' ? idleWindow : cpuWindow;
  // Unmeasured first: connections, JIT, and the first stored state of each gateway.
  for (const worker of workers) await (scenario === 'idle' ? idleWindow(worker) : load(worker, 1500));
  const figures: number[][] = workers.map(() => []);
  for (let round = 0; round < rounds; round += 1) {
    // A then B, then B then A (with a floor, every order of the three): neither side always follows another.
    const order =
      workers.length === 3 ? ORDERS_OF_THREE[round % ORDERS_OF_THREE.length] : round % 2 === 0 ? [0, 1] : [1, 0];
    for (const index of order) figures[index].push(await measure(workers[index]));
  }
  for (const worker of workers) {
    const exited = once(worker.child, 'exit');
    await worker.ask('quit').catch(() => undefined);
    worker.agent.destroy();
    await exited;
  }
  await mock?.close();

  const summary = pairedSummary(figures[0], figures[1]);
  if (!options.floor) return summary;
  return { ...summary, floor: { a: ratioSummary(figures[0], figures[2]), b: ratioSummary(figures[1], figures[2]) } };
}
