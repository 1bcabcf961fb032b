import { execFile } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import type { BenchOptions, ScenarioName } from './bench-options.js';
import { BARE_PROXY, DIRECT, GANTRY_HTTP, GANTRY_STUB, NGINX, type BenchResults } from './bench-results.js';
import { BenchStack, chatUrlOf, type BenchTarget, type Profiling } from './bench-stack.js';
import { measureAgentTurns } from './agent-scenario.js';
import { measurePauses } from './pause-scenario.js';
import { runApiScenarios } from './api-scenario-runs.js';
import { runFailover } from './failover-scenario.js';
import { runFleet } from './fleet-scenario.js';
import type { ChildServer } from './child-server.js';
import {
  benchModels,
  gatewayConfig,
  MOCK_BEHAVIOUR_HEADER,
  PACED_TOKEN_INTERVAL_MS,
  UPSTREAM_WRITES,
} from './gateway-configs.js';
import { measureIdleStreams } from './idle-streams.js';
import { runMultiTurn } from './multi-turn.js';
import { startOtlpSink } from './otlp-sink.js';
import { interleave } from './interleave.js';
import { runStoredResponses } from './responses-store-load.js';
import { Samples } from './samples.js';
import {
  latencyResult,
  latencyRound,
  measureStreaming,
  nonStreamingResult,
  nonStreamingRound,
  streamingResult,
  streamingRound,
  warmUp,
  type LatencySamples,
} from './streaming-load.js';
import { runTenants } from './tenants-scenario.js';
import { runWorkers } from './workers-scenario.js';

/** A progress line on stderr, so that stdout holds only the report. */
export type Progress = (line: string) => void;

/**
 * Runs the chosen scenarios in one go, each against the mock directly and through gateways that
 * run one at a time (an idle gateway still costs a little). Every process is stopped at the end.
 */
export async function runBench(options: BenchOptions, root: string, progress: Progress): Promise<BenchResults> {
  const started = performance.now();
  const { profile } = options;
  const wants = (name: ScenarioName) => options.scenarios.includes(name);
  const results: BenchResults = {
    startedAt: new Date().toISOString(),
    profile: profile.name,
    durationMs: 0,
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      memoryBytes: totalmem(),
      node: process.version,
      platform: process.platform,
    },
  };
  const stack = new BenchStack(root, profilingOf(options));
  try {
    const mock = await stack.startMock();
    const direct: BenchTarget = {
      label: DIRECT,
      chatUrl: chatUrlOf(mock.url),
      model: 'mock-model',
      upstreamPid: mock.pid,
    };
    const models = benchModels(mock.url.toString());
    const via = (gateway: ChildServer, model: string, label: string): BenchTarget => ({
      label,
      chatUrl: chatUrlOf(gateway.url),
      model,
      gatewayPid: gateway.pid,
      upstreamPid: model.startsWith('mock') ? mock.pid : undefined,
    });

    const forwardingScenarios: ScenarioName[] = ['throughput', 'non-streaming', 'agent', 'embeddings', 'completions'];
    if (wants('latency') || wants('pause') || forwardingScenarios.some(wants)) {
      // The reference proxies (the bare proxy, the floor for a Node gateway; nginx when asked for)
      // start beside the gateway; they are measured in the same rounds as direct and the gateway,
      // and judged by no target.
      const forwarding = forwardingScenarios.some(wants);
      const [gateway, bareProxy, nginx] = await Promise.all([
        stack.startGateway('main', gatewayConfig({ models })),
        forwarding ? stack.startBareProxy(mock.url) : undefined,
        forwarding && options.nginx !== undefined ? stack.startNginx(options.nginx, mock.url) : undefined,
      ]);
      const http = via(gateway, 'mock', GANTRY_HTTP);
      const stub = via(gateway, 'stub', GANTRY_STUB);
      const references = [
        ...(bareProxy ? [via(bareProxy, direct.model, BARE_PROXY)] : []),
        ...(nginx ? [via(nginx, direct.model, NGINX)] : []),
      ];
      // Warmed at once: nothing is measured yet, and the references need less.
      await Promise.all([
        warmGateway([http, stub], profile.gatewayWarmupMs, progress),
        references.length > 0 ? warmGateway(references, profile.gatewayWarmupMs / 2, progress) : undefined,
      ]);
      if (wants('throughput')) {
        const { concurrencies, upstreamWrites, tokens, rounds, timing } = profile.throughput;
        results.throughput = [];
        for (const writes of upstreamWrites) {
          // The mock's way of writing: a header for the proxies (they pass it on), a model of its own for the gateway.
          const { model, behaviour } = UPSTREAM_WRITES[writes];
          const hint =
            Object.keys(behaviour).length > 0
              ? { headers: { [MOCK_BEHAVIOUR_HEADER]: JSON.stringify(behaviour) } }
              : {};
          for (const streams of concurrencies) {
            const targets = [
              { ...direct, ...hint },
              ...references.map((reference) => ({ ...reference, ...hint })),
              via(gateway, model, GANTRY_HTTP),
            ];
            // The stub has no upstream: measured once.
            if (writes === upstreamWrites[0]) targets.push(stub);
            progress(
              `throughput (upstream writes ${writes}): ${streams} stream(s), ${targets.map((target) => target.label).join(' / ')}, ${rounds} round(s)`,
            );
            const tallies = await interleave(targets, rounds, (target) =>
              streamingRound(target, streams, tokens, timing),
            );
            targets.forEach((target, index) =>
              results.throughput!.push(
                streamingResult(
                  target.label,
                  streams,
                  tokens,
                  tallies[index],
                  target.label === GANTRY_STUB ? undefined : writes,
                ),
              ),
            );
          }
        }
      }
      if (wants('latency')) {
        const { streams, tokens, intervalMs, withStub, rounds, timing } = profile.latency;
        const paced = { tokenIntervalMs: PACED_TOKEN_INTERVAL_MS };
        const targets = [
          { ...direct, headers: { [MOCK_BEHAVIOUR_HEADER]: JSON.stringify(paced) } },
          via(gateway, 'mock-paced', GANTRY_HTTP),
          ...(withStub ? [via(gateway, 'stub-paced', GANTRY_STUB)] : []),
        ];
        progress(`latency: ${streams} streams, ${intervalMs} ms between tokens, ${rounds} round(s)`);
        const samples = targets.map((): LatencySamples => ({ ttft: new Samples(), gaps: new Samples() }));
        const tallies = await interleave(targets, rounds, (target) =>
          latencyRound(target, streams, tokens, intervalMs, timing, samples[targets.indexOf(target)]),
        );
        results.latency = targets.map((target, index) =>
          latencyResult(target.label, { streams, tokens, intervalMs }, samples[index], tallies[index]),
        );
      }
      if (wants('non-streaming')) {
        const { concurrency, tokens, rounds, timing } = profile.nonStreaming;
        const targets = [direct, ...references, http, stub];
        progress(
          `non-streaming: ${concurrency} concurrent, ${targets.map((target) => target.label).join(' / ')}, ${rounds} round(s)`,
        );
        const tallies = await interleave(targets, rounds, (target) =>
          nonStreamingRound(target, concurrency, tokens, timing),
        );
        results.nonStreaming = targets.map((target, index) =>
          nonStreamingResult(target.label, concurrency, tokens, tallies[index]),
        );
      }
      if (wants('agent')) {
        const { concurrency, rounds } = profile.agent;
        const targets = [direct, ...references, http];
        progress(
          `agent: ${concurrency} concurrent agent turns, ${targets.map((target) => target.label).join(' / ')}, ${rounds} round(s)`,
        );
        results.agent = await measureAgentTurns(targets, profile.agent);
      }
      if (wants('pause')) {
        progress(
          `pause: ${profile.pause.streams} paced streams, large bodies beside them every ${profile.pause.everyMs} ms`,
        );
        results.pause = await measurePauses(via(gateway, 'mock-paced', GANTRY_HTTP), stub, profile.pause);
      }
      await runApiScenarios(options, [direct, ...references, http, stub], results, progress);
      await stack.stop(gateway);
      if (bareProxy) await stack.stop(bareProxy);
      if (nginx) await stack.stop(nginx);
    }

    if (wants('observability')) {
      const { streams, tokens, engines, rounds, timing } = profile.observability;
      const sink = await startOtlpSink();
      // Both gateways run at once (an idle one costs next to nothing), so that rounds alternate.
      const off = await stack.startGateway('observability-off', gatewayConfig({ models, observability: 'off' }));
      const on = await stack.startGateway(
        'observability-on',
        gatewayConfig({ models, observability: { otlpEndpoint: sink.url } }),
      );
      const targetsOf = (gateway: ChildServer) =>
        engines.map((engine) =>
          engine === 'http' ? via(gateway, 'mock', GANTRY_HTTP) : via(gateway, 'stub', GANTRY_STUB),
        );
      await Promise.all([
        warmGateway(targetsOf(off), profile.gatewayWarmupMs, progress),
        warmGateway(targetsOf(on), profile.gatewayWarmupMs, progress),
      ]);
      progress(`observability: ${streams} streams, off / on, ${rounds} round(s)`);
      const targets = engines.flatMap((_, index) => [targetsOf(off)[index], targetsOf(on)[index]]);
      const tallies = await interleave(targets, rounds, (target) => streamingRound(target, streams, tokens, timing));
      const rows = targets.map((target, index) => streamingResult(target.label, streams, tokens, tallies[index]));
      results.observability = {
        off: rows.filter((_, index) => index % 2 === 0),
        on: rows.filter((_, index) => index % 2 === 1),
        sink: { requests: sink.requests, bytes: sink.bytes },
      };
      await stack.stop(off);
      await stack.stop(on);
      await sink.close();
    }

    if (wants('stored-responses')) {
      results.storedResponses = await runStoredResponses(
        stack,
        { models, mockPid: mock.pid },
        profile.storedResponses,
        profile.gatewayWarmupMs,
        progress,
      );
    }

    if (wants('idle')) {
      results.idle = [];
      for (const engine of ['stub', 'http'] as const) {
        // A fresh mock and gateway per engine: memory is measured from a clean baseline.
        const upstream = engine === 'http' ? await stack.startMock() : undefined;
        const idleModels = upstream ? benchModels(upstream.url.toString()) : models;
        const gateway = await stack.startGateway(
          `idle-${engine}`,
          gatewayConfig({ models: idleModels, keepaliveMs: profile.idle.keepaliveMs }),
        );
        const target: BenchTarget = {
          label: engine === 'http' ? GANTRY_HTTP : GANTRY_STUB,
          chatUrl: chatUrlOf(gateway.url),
          model: engine === 'http' ? 'mock-idle' : 'stub-idle',
          gatewayPid: gateway.pid,
          upstreamPid: upstream?.pid,
        };
        progress(`idle: ${target.label}, ${profile.idle.streams} streams for ${profile.idle.holdMs / 1000} s`);
        results.idle.push(await measureIdleStreams(target, profile.idle));
        await stack.stop(gateway);
        if (upstream) await stack.stop(upstream);
      }
    }

    if (wants('multi-turn')) results.multiTurn = await runMultiTurn(stack, profile.multiTurn, progress);

    if (wants('failover')) results.failover = await runFailover(stack, profile.failover, progress);

    if (wants('llama')) results.llama = await runLlama(stack, options, progress);

    if (wants('workers')) results.workers = await runWorkers(stack, profile.workers, progress);

    if (wants('tenants')) results.tenants = await runTenants(stack, profile.tenants, progress);

    if (wants('fleet')) results.fleet = await runFleet(stack, profile.fleet, progress);
  } finally {
    await stack.dispose();
  }
  results.durationMs = performance.now() - started;
  return results;
}

async function warmGateway(targets: BenchTarget[], durationMs: number, progress: Progress): Promise<void> {
  progress(`warming up a fresh gateway for ${durationMs / 1000} s`);
  for (const target of targets) await warmUp(target, 16, 256, durationMs / targets.length);
}

function profilingOf(options: BenchOptions): Profiling | undefined {
  if (options.profileGateways === undefined) return undefined;
  return { kind: options.profileGateways, dir: resolve(options.outDir, 'profiles') };
}

const LLAMA_MODEL = 'tiny (random weights, 2 layers, 64 dims; CPU, 1 thread)';

async function runLlama(stack: BenchStack, options: BenchOptions, progress: Progress): Promise<BenchResults['llama']> {
  const { concurrencies, maxTokens, timing } = options.profile.llama;
  const modelPath = stack.path('tiny.gguf');
  let gateway: ChildServer;
  try {
    await promisify(execFile)(process.execPath, ['dist/scripts/make-tiny-gguf.js', modelPath], { cwd: stack.root });
    const model = {
      name: 'tiny',
      engine: 'llama',
      modelPath,
      threads: 1,
      gpu: false,
      sequences: Math.max(...concurrencies),
      contextSize: 1024,
    };
    gateway = await stack.startGateway('llama', gatewayConfig({ models: [model] }));
  } catch (error) {
    return { available: false, reason: (error as Error).message.split('\n')[0] };
  }
  const target: BenchTarget = {
    label: 'gantry llama',
    chatUrl: chatUrlOf(gateway.url),
    model: 'tiny',
    promptWords: 8,
    gatewayPid: gateway.pid,
  };
  const results = [];
  for (const streams of concurrencies) {
    progress(`llama: ${streams} stream(s), up to ${maxTokens} tokens each`);
    results.push(await measureStreaming(target, streams, maxTokens, timing));
  }
  await stack.stop(gateway);
  return { available: true, model: LLAMA_MODEL, results };
}
