import { measureAdmissionRoundTrips, type RoundTripResult } from './admission-round-trip.js';
import type { BenchStack, BenchTarget } from './bench-stack.js';
import { chatUrlOf } from './bench-stack.js';
import { processGroupOf, type ProcessGroup } from './gateway-processes.js';
import { benchModels, chatBody, gatewayConfig } from './gateway-configs.js';
import { interleave } from './interleave.js';
import { loopbackUrl } from './loopback.js';
import { responsesBody } from './responses-client.js';
import { warmUp, type LoadTiming } from './streaming-load.js';
import { addWindows, measureRound, sideBySideTally } from './workers-round.js';
import {
  requestCostRow,
  streamingRow,
  type AdmissionRow,
  type StoredRow,
  type WorkersStreamingRow,
} from './workers-rows.js';

/** A model with a concurrency limit too high to bind: every request's admission goes through the primary. */
const COORDINATED_MODEL = { name: 'stub-coordinated', engine: 'stub', maxConcurrency: 1_000_000 };

export interface WorkersPlan {
  /** The worker counts compared, in one run (1: one process, no cluster). */
  counts: number[];
  /** Unmeasured load on each fresh gateway before it is measured (a quarter more for the coordinated model). */
  warmupMs: number;
  /** As many chunks as the machine gives: chunks/s. */
  saturated: { streams: number; tokens: number; rounds: number; timing: LoadTiming };
  /**
   * The same load on every worker, well below what the machine gives (the mock paced at 10 ms a
   * token; `streamsPerWorker` streams for each worker), so that no process waits for a core: CPU
   * per chunk per worker as a cost, comparable whatever the number of workers.
   */
  paced: { streamsPerWorker: number; tokens: number; rounds: number; timing: LoadTiming };
  /** Non-streaming requests with the most workers, admitted in the worker or through the primary. */
  admission: { concurrencies: number[]; tokens: number; rounds: number; timing: LoadTiming };
  /** Admissions alone (no HTTP) through a primary, so many in flight at once, each for `durationMs`. */
  roundTrips: { inFlight: number[]; durationMs: number };
  /**
   * Streamed Responses requests to the stub with `store: false` and `store: true` (the memory
   * store: in the process with one, in the primary with workers), on every gateway: what keeping
   * a response costs per request, in one process and through the primary.
   */
  stored: { concurrency: number; tokens: number; rounds: number; timing: LoadTiming };
}

export interface WorkersResults {
  plan: WorkersPlan;
  streaming: WorkersStreamingRow[];
  admission: AdmissionRow[];
  stored: StoredRow[];
  roundTrips: RoundTripResult[];
}

/**
 * Workers: one gateway of one process and one of two workers, started side by side on the same
 * mock and measured in turns. Streaming through the HTTP engine gives chunks/s, the gateway's CPU
 * per chunk (all its processes), each worker's CPU per chunk it served, and the primary's share.
 * Non-streaming requests to a model without a concurrency limit (admitted in the worker) and to
 * one with a limit (each admission a round trip to the primary: reserve, then release) give what
 * coordinated admission costs per request; admissions alone, without HTTP, give its floor.
 * Streamed Responses kept or not, in one process and through the primary, give what the
 * instance's memory store costs per request.
 */
export async function runWorkers(
  stack: BenchStack,
  workersPlan: WorkersPlan,
  progress: (line: string) => void,
): Promise<WorkersResults> {
  const mock = await stack.startMock([], 'mock-workers');
  const models = [...benchModels(mock.url.toString()), COORDINATED_MODEL];
  const groups: ProcessGroup[] = [];
  for (const workers of workersPlan.counts) {
    const config = gatewayConfig({ models });
    // The default response store (memory): with workers, the primary's.
    const server = await stack.startGateway(`workers-${workers}`, {
      ...config,
      server: { ...(config.server as object), workers },
    });
    groups.push(await processGroupOf(server, workers));
  }
  const target = (group: ProcessGroup, model: string): BenchTarget => ({
    label: `${group.workers} worker(s)`,
    chatUrl: chatUrlOf(group.server.url),
    model,
    upstreamPid: mock.pid,
  });

  for (const group of groups) {
    progress(`workers: warming up the gateway of ${group.workers} worker(s)`);
    await warmUp(target(group, 'mock'), 16, 256, workersPlan.warmupMs);
    await warmUp(target(group, COORDINATED_MODEL.name), 16, 16, workersPlan.warmupMs / 4);
  }

  const streaming: WorkersStreamingRow[] = [];
  const saturated = workersPlan.saturated;
  progress(
    `workers: saturated streaming, ${saturated.streams} streams, ${groups.map((group) => group.workers).join(' / ')} worker(s), ${saturated.rounds} round(s)`,
  );
  const busy = await interleave(groups, saturated.rounds, (group) =>
    measureRound(
      group,
      target(group, 'mock'),
      saturated.streams,
      chatBody('mock', saturated.tokens, true),
      saturated.timing,
      'chat-stream',
    ),
  );
  groups.forEach((group, index) =>
    streaming.push(streamingRow('saturated', saturated.streams, group, addWindows(busy[index]))),
  );
  const paced = workersPlan.paced;
  // The control: one-process gateways side by side, as many as the most workers, each with the
  // streams of one worker. What they cost more per chunk than one alone is the machine (busy
  // processes sharing its cores), not the cluster.
  const most = groups.at(-1)!;
  const singles = [groups[0]];
  for (let index = 1; index < most.workers; index += 1) {
    singles.push(
      await processGroupOf(await stack.startGateway(`workers-1-${index + 1}`, gatewayConfig({ models })), 1),
    );
  }
  for (const single of singles.slice(1)) await warmUp(target(single, 'mock'), 16, 256, workersPlan.warmupMs);
  const sideBySide: ProcessGroup = {
    workers: singles.length,
    server: singles[0].server,
    workerPids: singles.flatMap((single) => single.workerPids),
  };
  const pacedTargets = [...groups, sideBySide];
  progress(
    `workers: paced streaming, ${paced.streamsPerWorker} streams per worker (and per process side by side), ${paced.rounds} round(s)`,
  );
  const calm = await interleave(pacedTargets, paced.rounds, async (group) => {
    const body = chatBody('mock-paced', paced.tokens, true);
    if (group !== sideBySide)
      return measureRound(
        group,
        target(group, 'mock-paced'),
        paced.streamsPerWorker * group.workers,
        body,
        paced.timing,
        'chat-stream',
      );
    return sideBySideTally(
      await Promise.all(
        singles.map((single) =>
          measureRound(single, target(single, 'mock-paced'), paced.streamsPerWorker, body, paced.timing, 'chat-stream'),
        ),
      ),
    );
  });
  pacedTargets.forEach((group, index) =>
    streaming.push(
      streamingRow(
        group === sideBySide ? 'side by side' : 'paced',
        paced.streamsPerWorker * group.workers,
        group,
        addWindows(calm[index]),
      ),
    ),
  );
  for (const single of singles.slice(1)) await stack.stop(single.server);

  const { concurrencies, tokens, rounds, timing } = workersPlan.admission;
  const admissionTargets = concurrencies.flatMap((concurrency) =>
    (['free', 'coordinated'] as const).map((admission) => ({ concurrency, admission })),
  );
  progress(
    `workers: admission with ${most.workers} worker(s), ${concurrencies.join(' / ')} concurrent non-streaming requests, free / coordinated, ${rounds} round(s)`,
  );
  const answered = await interleave(admissionTargets, rounds, ({ concurrency, admission }) => {
    const model = admission === 'free' ? 'stub' : COORDINATED_MODEL.name;
    return measureRound(most, target(most, model), concurrency, chatBody(model, tokens, false), timing, 'chat');
  });
  const admission = admissionTargets.map(({ concurrency, admission: kind }, index): AdmissionRow => ({
    ...requestCostRow(most, concurrency, addWindows(answered[index])),
    admission: kind,
  }));

  const stored = workersPlan.stored;
  const storedTargets = groups.flatMap((group) => (['off', 'on'] as const).map((store) => ({ group, store })));
  progress(
    `workers: stored responses, ${stored.concurrency} streams, store off / on, ${groups.map((group) => group.workers).join(' / ')} worker(s), ${stored.rounds} round(s)`,
  );
  const keep = (group: ProcessGroup, store: StoredRow['store'], timing: LoadTiming) =>
    measureRound(
      group,
      { ...target(group, 'stub'), chatUrl: responsesUrlOf(group) },
      stored.concurrency,
      responsesBody('stub', stored.tokens, store),
      timing,
      'responses',
    );
  for (const group of groups) await keep(group, 'on', { warmupMs: workersPlan.warmupMs / 4, measureMs: 0, rampMs: 0 });
  const kept = await interleave(storedTargets, stored.rounds, ({ group, store }) => keep(group, store, stored.timing));
  const storedRows = storedTargets.map(({ group, store }, index): StoredRow => ({
    ...requestCostRow(group, stored.concurrency, addWindows(kept[index])),
    store,
  }));

  for (const group of groups) await stack.stop(group.server);
  await stack.stop(mock);

  progress(`workers: admission round trips alone, ${workersPlan.roundTrips.inFlight.join(' / ')} in flight`);
  const roundTrips: RoundTripResult[] = [];
  for (const inFlight of workersPlan.roundTrips.inFlight)
    roundTrips.push(await measureAdmissionRoundTrips(inFlight, workersPlan.roundTrips.durationMs));
  return { plan: workersPlan, streaming, admission, stored: storedRows, roundTrips };
}

/** `POST /v1/responses` of a gateway. */
function responsesUrlOf(group: ProcessGroup): URL {
  return loopbackUrl(new URL('/v1/responses', group.server.url).toString());
}
