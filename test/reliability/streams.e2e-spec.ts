import { connect } from 'node:net';
import type { Server, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../../apps/mock-upstream/mock-upstream.js';
import type { QueueWait } from '../../src/admission/admission-queue.js';
import type { StubEngine } from '../../src/engines/stub/stub-engine.js';
import { StreamResponder } from '../../src/http/streaming/stream-responder.js';
import { LifecycleService } from '../../src/lifecycle/lifecycle.service.js';
import { eventually, startGateway, type RunningGateway } from '../support/gateway.js';
import { postStream, seededRandom, unpooledAgent, type Frame, type StreamOutcome } from '../support/http-stream.js';
import { CHAT, MESSAGES, PROTOCOLS, RESPONSES, type ProtocolStream } from '../support/protocol-streams.js';

const SLOW_READER_CAP = 256 * 1024;

let gateway: RunningGateway;
let upstream: MockUpstream;
const serverSockets: Socket[] = [];
const behaving = (behaviour: Record<string, unknown>) => ({ 'x-mock-behaviour': JSON.stringify(behaviour) });

beforeAll(async () => {
  upstream = await startMockUpstream({ recordLimit: 10 });
  const viaUpstream = (name: string, behaviour: Record<string, unknown>) => ({
    name,
    engine: 'http',
    upstreams: [upstream.url],
    headers: behaving({ prefillMs: 50, tokenIntervalMs: 15, ...behaviour }),
    healthCheckIntervalMs: 0,
    // Injected faults must not eject the only replica: every stream should meet its own fault.
    maxFailures: 1_000_000,
    maxConcurrency: 25,
    maxQueue: 2000,
  });
  gateway = await startGateway({
    keepalive: { mode: 'chunks', intervalMs: 50 },
    server: { maxBufferedBytesPerStream: SLOW_READER_CAP, keepAliveTimeoutMs: 30_000, headersTimeoutMs: 20_000 },
    models: [
      { name: 'crowd', engine: 'stub', prefillMs: 50, tokenIntervalMs: 15, maxConcurrency: 25, maxQueue: 2000 },
      { name: 'fifo', engine: 'stub', tokenIntervalMs: 40, maxConcurrency: 1, maxQueue: 3 },
      { name: 'firehose', engine: 'stub', tokenIntervalMs: 0 },
      viaUpstream('crowd-http', {}),
      viaUpstream('crowd-http-dropped', { failure: 'drop', failAfterTokens: 2 }),
    ],
  });
  (gateway.app.getHttpServer() as Server).on('connection', (socket: Socket) => serverSockets.push(socket));
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

const stubOf = (model: string) => gateway.registry.resolve(model).engine as StubEngine;
const connections = () =>
  new Promise<number>((resolve, reject) =>
    (gateway.app.getHttpServer() as Server).getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );

const stubIdle = (model: string) => () => stubOf(model).activeGenerations === 0 && stubOf(model).pendingTimers === 0;

/** Everything a stream can hold is back to zero: exchanges, admission, engine work, sockets. */
async function expectAllSettled(
  models: string | string[],
  engineIdle: () => boolean = stubIdle(models as string),
): Promise<void> {
  const admissions = [models].flat().map((model) => gateway.registry.resolve(model).admission);
  const lifecycle = gateway.app.get(LifecycleService);
  const settled = () =>
    lifecycle.inFlight === 0 &&
    admissions.every((admission) => admission.running === 0 && admission.queued === 0) &&
    engineIdle();
  expect(await eventually(settled, 5_000)).toBe(true);
  let openSockets = await connections();
  for (let tries = 0; openSockets > 0 && tries < 200; tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    openSockets = await connections();
  }
  expect(openSockets).toBe(0);
}

type HangUpPlan = { at: 'opening' } | { at: 'heartbeat' } | { at: 'content'; after: number } | { at: 'never' };

function planHangUp(random: () => number): HangUpPlan {
  const draw = random();
  if (draw < 0.12) return { at: 'opening' };
  if (draw < 0.24) return { at: 'heartbeat' };
  if (draw < 0.5) return { at: 'content', after: 1 + Math.floor(random() * 5) };
  return { at: 'never' };
}

function hangsUpAt(plan: HangUpPlan, protocol: ProtocolStream) {
  let content = 0;
  return (frame: Frame, frames: Frame[]): boolean => {
    if (protocol.isContent(frame)) content += 1;
    switch (plan.at) {
      case 'opening':
        return frames.length === 1;
      case 'heartbeat':
        return protocol.isHeartbeat(frame);
      case 'content':
        return content >= plan.after;
      case 'never':
        return false;
    }
  };
}

/**
 * A target the crowd runs against: its models (a faulty one gets a share of the streams, each of
 * which must end with the protocol's in-band error or the client's hang-up) and how to tell that
 * its engine holds no more work.
 */
interface CrowdTarget {
  name: string;
  model: string;
  faultyModel?: string;
  engineIdle: () => boolean;
}
const CROWD_TARGETS: CrowdTarget[] = [
  { name: 'the stub engine', model: 'crowd', engineIdle: stubIdle('crowd') },
  {
    name: 'the mock upstream through the HTTP engine, with dropped connections injected',
    model: 'crowd-http',
    faultyModel: 'crowd-http-dropped',
    engineIdle: () => upstream.state.openRequests === 0,
  },
];
const CROWD = 1000;

/**
 * Streams that take every slot of a model and hold it until released: while they run, the whole
 * crowd is launched and waits in the queue, so "a crowd in flight at once" holds however long the
 * launch takes on this machine. Each streams a long text slowly and hangs up at its next frame
 * after `release()`.
 */
async function holdEverySlot(model: string, agent: ReturnType<typeof unpooledAgent>) {
  const admission = gateway.registry.resolve(model).admission;
  const slots = admission.limits.maxConcurrency;
  const text = Array.from({ length: 20_000 }, (_, word) => `hold${word}`).join(' ');
  let released = false;
  const holders = Array.from({ length: slots }, () =>
    postStream(gateway.url, CHAT.path, CHAT.body(model, text), { agent, onFrame: () => released, timeoutMs: 120_000 }),
  );
  expect(await eventually(() => admission.running === slots, 30_000)).toBe(true);
  return {
    count: slots,
    release: async () => {
      released = true;
      return Promise.all(holders);
    },
  };
}

describe.each(CROWD_TARGETS)(
  '1,000 concurrent streams against $name, with random hang-ups at every phase',
  ({ model, faultyModel, engineIdle }) => {
    it('ends every stream with a valid ending or the client hang-up, and leaks nothing', async () => {
      const random = seededRandom(7);
      const agent = unpooledAgent();
      const lifecycle = gateway.app.get(LifecycleService);
      const models = faultyModel ? [model, faultyModel] : [model];
      const admissions = models.map((name) => gateway.registry.resolve(name).admission);
      const holders = await holdEverySlot(model, agent);
      let holdersOpen = holders.count;

      const waits: QueueWait[] = [];
      const mainWaits: QueueWait[] = [];
      const waitSubscriptions = admissions.map((admission, index) =>
        admission.waits$.subscribe((wait) => {
          waits.push(wait);
          if (index === 0) mainWaits.push(wait);
        }),
      );
      let peakInFlight = 0;
      let peakQueued = 0;
      const sampler = setInterval(() => {
        peakInFlight = Math.max(peakInFlight, lifecycle.inFlight - holdersOpen);
        peakQueued = Math.max(
          peakQueued,
          admissions.reduce((sum, admission) => sum + admission.queued, 0),
        );
      }, 5);

      const runs: Array<
        Promise<{ plan: HangUpPlan; protocol: ProtocolStream; outcome: StreamOutcome; words: string; faulty: boolean }>
      > = [];
      let mainStreams = 0;
      for (let index = 0; index < CROWD; index += 1) {
        const protocol = PROTOCOLS[index % PROTOCOLS.length];
        const plan = planHangUp(random);
        const faulty = faultyModel !== undefined && random() < 0.15;
        if (!faulty) mainStreams += 1;
        const words = Array.from({ length: 8 + Math.floor(random() * 12) }, (_, word) => `s${index}w${word}`).join(' ');
        const body = protocol.body(faulty ? faultyModel! : model, words);
        runs.push(
          postStream(gateway.url, protocol.path, body, {
            agent,
            onFrame: hangsUpAt(plan, protocol),
            timeoutMs: 120_000,
          }).then((outcome) => ({ plan, protocol, outcome, words, faulty })),
        );
        if (index % 100 === 99) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      // Every stream of the held model has reached its queue (or hung up there) before a slot frees.
      const mainAdmission = admissions[0];
      const allArrived = () =>
        mainAdmission.queued + mainWaits.filter((wait) => wait.outcome === 'abandoned').length === mainStreams;
      expect(await eventually(allArrived, 60_000)).toBe(true);
      const launchedAt = performance.now();
      const held = await holders.release();
      holdersOpen = 0;
      expect(held.map((outcome) => outcome.end)).toEqual(Array(holders.count).fill('client'));
      const results = await Promise.all(runs);
      console.log(
        `crowd: peak in flight ${peakInFlight}, peak queued ${peakQueued}, ${Math.round(performance.now() - launchedAt)} ms after release`,
      );
      clearInterval(sampler);
      waitSubscriptions.forEach((subscription) => subscription.unsubscribe());

      const problems: string[] = [];
      for (const [index, { plan, protocol, outcome, words, faulty }] of results.entries()) {
        const where = `stream ${index} (${protocol.api}, hang-up at ${plan.at}${faulty ? ', faulty' : ''})`;
        if (outcome.status !== 200) problems.push(`${where}: status ${outcome.status}`);
        else if (outcome.end === 'client') continue;
        else if (outcome.end !== 'server') problems.push(`${where}: ended by ${outcome.end} ${outcome.error ?? ''}`);
        else if (faulty) {
          if (protocol.errorMessage(outcome.frames) === undefined) problems.push(`${where}: no in-band error ending`);
        } else if (!protocol.endedWell(outcome.frames)) problems.push(`${where}: no valid ending`);
        else if (outcome.frames.filter(protocol.isContent).map(protocol.contentOf).join('') !== words)
          problems.push(`${where}: wrong text`);
      }
      expect(problems).toEqual([]);

      const completed = results.filter((result) => result.outcome.end === 'server' && !result.faulty).length;
      const hungUp = results.filter((result) => result.outcome.end === 'client');
      expect(completed).toBeGreaterThan(400);
      for (const phase of ['opening', 'heartbeat', 'content'] as const) {
        expect(hungUp.filter((result) => result.plan.at === phase).length).toBeGreaterThan(80);
      }
      // Every phase was really exercised: a crowd in flight at once (about three quarters of it hang
      // up only after admission), waits in the queue, hang-ups there.
      expect(peakInFlight).toBeGreaterThan(500);
      expect(peakQueued).toBeGreaterThan(500);
      expect(waits.filter((wait) => wait.outcome === 'abandoned').length).toBeGreaterThan(50);
      expect(waits.filter((wait) => wait.outcome === 'admitted' && wait.waitMs > 0).length).toBeGreaterThan(400);
      expect(waits).toHaveLength(CROWD);

      if (faultyModel)
        expect(results.filter((result) => result.faulty && result.outcome.end === 'server').length).toBeGreaterThan(50);

      agent.destroy();
      await expectAllSettled(models, engineIdle);
    }, 180_000);
  },
);

describe('a full queue', () => {
  it('refuses with 429 (OpenAI) or 529 (Anthropic) and Retry-After, while queued streams get keep-alives and run in FIFO order', async () => {
    const admission = gateway.registry.resolve('fifo').admission;
    const agent = unpooledAgent();
    const release = { holder: false };
    // Long enough (400 tokens, 16 s) to hold the slot however slow the setup below; it hangs up when released.
    const holder = postStream(gateway.url, CHAT.path, CHAT.body('fifo', 'holding the only slot '.repeat(100).trim()), {
      agent,
      onFrame: () => release.holder,
    });
    expect(await eventually(() => admission.running === 1)).toBe(true);

    const firstContentOrder: number[] = [];
    const heartbeatsWhileQueued = [0, 0, 0];
    const queued: Array<Promise<StreamOutcome>> = [];
    for (const [position, protocol] of [CHAT, MESSAGES, RESPONSES].entries()) {
      queued.push(
        postStream(gateway.url, protocol.path, protocol.body('fifo', `queued ${position} done`), {
          agent,
          onFrame: (frame, frames) => {
            if (protocol.isHeartbeat(frame) && !release.holder) heartbeatsWhileQueued[position] += 1;
            if (protocol.isContent(frame) && frames.filter(protocol.isContent).length === 1)
              firstContentOrder.push(position);
          },
        }),
      );
      expect(await eventually(() => admission.queued === position + 1)).toBe(true);
    }

    const refused = await Promise.all(
      [CHAT, MESSAGES, RESPONSES].map((protocol) =>
        postStream(gateway.url, protocol.path, protocol.body('fifo', 'one too many'), { agent }),
      ),
    );
    expect(refused.map((outcome) => outcome.status)).toEqual([429, 529, 429]);
    expect(refused.map((outcome) => outcome.headers['retry-after'])).toEqual(['1', '1', '1']);
    expect(JSON.parse(refused[0].body)).toMatchObject({
      error: { type: 'rate_limit_error', code: 'queue_full', param: null },
    });
    expect(JSON.parse(refused[1].body)).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
    expect(JSON.parse(refused[2].body)).toMatchObject({ error: { type: 'rate_limit_error', code: 'queue_full' } });

    // Queued streams are kept alive: each sees several heartbeats before the slot frees (however
    // long that takes on this machine), and no output.
    expect(await eventually(() => heartbeatsWhileQueued.every((count) => count >= 4), 10_000)).toBe(true);
    expect(firstContentOrder).toEqual([]);
    release.holder = true;
    await holder;
    const outcomes = await Promise.all(queued);
    expect(firstContentOrder).toEqual([0, 1, 2]);
    for (const [position, protocol] of [CHAT, MESSAGES, RESPONSES].entries()) {
      const frames = outcomes[position].frames;
      const firstContent = frames.findIndex(protocol.isContent);
      expect(frames.slice(0, firstContent).filter(protocol.isHeartbeat).length).toBeGreaterThanOrEqual(4);
      expect(protocol.endedWell(frames)).toBe(true);
    }
    agent.destroy();
    await expectAllSettled('fifo');
  });
});

describe('a client that stops reading', () => {
  it('is never dropped while it reads, even when one batch of frames is larger than the cap', async () => {
    const droppedBefore = gateway.app.get(StreamResponder).droppedSlowClients;
    // ~110 KB of text: the Responses stream ends with four events that each carry all of it.
    const words = Array.from({ length: 20_000 }, (_, index) => `w${index}`).join(' ');
    const agent = unpooledAgent();
    const outcome = await postStream(gateway.url, RESPONSES.path, RESPONSES.body('firehose', words), {
      agent,
      timeoutMs: 30_000,
    });
    agent.destroy();
    expect(RESPONSES.endedWell(outcome.frames)).toBe(true);
    expect(outcome.frames.filter(RESPONSES.isContent).map(RESPONSES.contentOf).join('')).toBe(words);
    expect(gateway.app.get(StreamResponder).droppedSlowClients).toBe(droppedBefore);
  });

  it('is dropped once its stream buffers past maxBufferedBytesPerStream, and the engine work is cancelled', async () => {
    const responder = gateway.app.get(StreamResponder);
    const droppedBefore = responder.droppedSlowClients;
    const words = Array.from({ length: 200_000 }, (_, index) => `w${index}`).join(' ');
    const payload = Buffer.from(JSON.stringify(CHAT.body('firehose', words)));
    const socketsBefore = serverSockets.length;
    const client = connect(Number(new URL(gateway.url).port), '127.0.0.1');
    await new Promise<void>((resolve) => client.once('connect', resolve));
    client.pause();
    client.write(
      `POST /v1/chat/completions HTTP/1.1\r\nhost: gantry\r\ncontent-type: application/json\r\ncontent-length: ${payload.length}\r\n\r\n`,
    );
    client.write(payload);

    // Sample what Gantry holds in user space for this client while it refuses to read.
    expect(await eventually(() => serverSockets.length > socketsBefore)).toBe(true);
    const serverSide = serverSockets.at(-1)!;
    let peakBuffered = 0;
    const sampler = setInterval(() => (peakBuffered = Math.max(peakBuffered, serverSide.writableLength)), 1);
    expect(await eventually(() => responder.droppedSlowClients === droppedBefore + 1, 15_000)).toBe(true);
    // Most of the ~30 MB answer was still to come: the engine stops this soon only if it was cancelled.
    expect(await eventually(() => stubOf('firehose').activeGenerations === 0, 500)).toBe(true);
    clearInterval(sampler);
    expect(serverSide.destroyed).toBe(true);
    expect(peakBuffered).toBeLessThanOrEqual(2 * SLOW_READER_CAP);
    await expectAllSettled('firehose');

    // What reached the client is a cut stream, far from the ~30 MB the whole answer would take.
    let received = '';
    client.setEncoding('utf8');
    client.on('data', (text: string) => (received += text));
    client.resume();
    await new Promise((resolve) => client.once('close', resolve));
    expect(received).not.toContain('[DONE]');
    expect(received.length).toBeLessThan(20 * 1024 * 1024);
  }, 30_000);
});

describe('HTTP server settings', () => {
  it('applies the configured timeouts, and never a whole-request timeout by default', () => {
    const server = gateway.app.getHttpServer();
    expect([server.keepAliveTimeout, server.headersTimeout, server.requestTimeout]).toEqual([30_000, 20_000, 0]);
  });
});
