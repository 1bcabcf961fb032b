import cluster from 'node:cluster';
import type { Stats } from 'node:fs';
import { pino, type Logger } from 'pino';
import type { AdmissionLimits } from '../admission/admission-queue.js';
import { ConfigError } from '../config/config-error.js';
import type { ConfigSources } from '../config/config-loader.js';
import { startWarnings } from '../config/config-warnings.js';
import { applyLiveKeys, keysNeedingRestart, liveKeysChanged } from '../config/config-changes.js';
import type { GatewayConfig } from '../config/gateway-config.js';
import { admissionLimitsOf } from '../models/model-registry.js';
import { watchConfigFile } from '../reload/config-file-watcher.js';
import { refusedMessage, reloadedMessage, restartWarning, unfinishedMessage } from '../reload/reload-messages.js';
import { readReloadedConfig } from '../reload/reloaded-config.js';
import { InstanceAdmission } from './instance-admission.js';
import { InstanceLimits } from './instance-limits.js';
import { InstanceResponses } from './instance-responses.js';
import { IpcChannel } from './ipc-channel.js';
import { serveAdmission, serveLimits, serveResponses } from './primary-handlers.js';
import { PrimaryMetrics } from './primary-metrics.js';
import type { WorkerLink } from './worker-link.js';
import type { WorkerHello, WorkerReady, WorkerRefusal, WorkerReload } from './worker-protocol.js';
import { reloadWorker } from './worker-reload.js';

export interface PrimaryOptions {
  workers: number;
  sources: ConfigSources;
  /** `--watch-config`: re-read the file when it changes, as SIGHUP does. */
  watch: boolean;
  /** The file's status before it was read, so that a change during the start is not missed. */
  since?: Stats;
}

/** After the drain deadline, how long workers get to exit before they are killed. */
const EXIT_GRACE_MS = 15_000;
/** A worker that dies within this of its start is restarted after a growing delay (up to 5 s). */
const EARLY_DEATH_MS = 5_000;

/**
 * The primary of `server.workers: N > 1`: it forks N workers (each a whole gateway on the shared
 * port), holds what the instance shares (every model's admission queue, the per-key limits of
 * `store: memory`, the stored responses of `responses.store: memory`), sums the workers' metrics for whichever answers `GET /metrics`, restarts a
 * worker that dies (its places and leases come back at once), re-reads the file on SIGHUP (or
 * when it changes, with --watch-config) and has every worker apply it, and on SIGTERM or SIGINT
 * drains every worker as one process drains itself, then exits 0.
 */
export function runPrimary(config: GatewayConfig, options: PrimaryOptions): void {
  new Primary(config, options).start();
}

class Primary {
  private readonly logger: Logger;
  /** What the workers run: the configuration of the start, its live keys (models, API keys) as last reloaded. */
  private readonly running: GatewayConfig;
  /** Bumped by every applied reload; a worker that started on an older one is brought up to date. */
  private version = 0;
  private readonly admission: InstanceAdmission;
  private readonly limits = new InstanceLimits();
  /** The stored responses of `responses.store: memory`, one store for the instance. */
  private readonly responses?: InstanceResponses;
  private readonly links = new Map<number, WorkerLink>();
  private readonly metrics = new PrimaryMetrics(this.links);
  private announced = false;
  /** Why a worker refused the configuration at start (the first to say): the instance stops. */
  private refusal?: string;
  private stopping = false;
  private exitCode = 0;
  private earlyDeaths = 0;
  private readonly pendingForks = new Set<NodeJS.Timeout>();
  private reloads: Promise<unknown> = Promise.resolve();
  private unwatch: () => void = () => undefined;

  constructor(
    config: GatewayConfig,
    private readonly options: PrimaryOptions,
  ) {
    this.running = config;
    this.logger = pino({ level: config.observability.logging.level }, pino.destination({ dest: 1, sync: true })).child({
      context: 'Gantry',
    });
    this.admission = new InstanceAdmission(this.limitsOf(config));
    const stored = config.responses;
    if (stored.store === 'memory') {
      this.responses = new InstanceResponses({
        ttlSeconds: stored.ttlSeconds,
        maxStoredResponses: stored.maxStoredResponses,
        maxEventsPerResponse: stored.maxEventsPerResponse,
        maxStoredBytes: stored.maxStoredBytes,
      });
    }
  }

  start(): void {
    // Signals first: one that comes while the workers are forked is the primary's to handle.
    process.on('SIGTERM', () => this.shutdown());
    process.on('SIGINT', () => this.shutdown());
    process.on('SIGHUP', () => this.reload());
    for (const warning of startWarnings(this.running)) this.logger.warn(warning);
    for (let index = 0; index < this.options.workers; index += 1) this.fork();
    const file = this.options.sources.file;
    if (this.options.watch && file !== undefined)
      this.unwatch = watchConfigFile(file, () => this.reload(), { since: this.options.since });
  }

  private fork(): void {
    const worker = cluster.fork();
    const channel = new IpcChannel(
      (message) => {
        if (!worker.isConnected()) throw new Error('the worker is gone');
        worker.send(message);
      },
      (error, type) =>
        this.logger.error(
          `Handling '${type}' from worker ${worker.process.pid} failed: ${(error as Error)?.stack ?? String(error)}`,
        ),
    );
    const link: WorkerLink = {
      worker,
      channel,
      pid: worker.process.pid ?? 0,
      forkedAt: Date.now(),
      ready: false,
      version: -1,
    };
    this.links.set(worker.id, link);
    worker.on('message', (message) => channel.receive(message));
    // A message that could not be sent (the worker is exiting) is the exit's business, not a crash.
    worker.on('error', () => undefined);
    worker.on('exit', (code: number | null, signal: string | null) => void this.exited(link, code, signal));

    channel.handle('hello', (): WorkerHello => {
      link.version = this.version;
      return { config: plain(this.running), origin: this.origin, version: this.version };
    });
    channel.on<WorkerReady>('ready', (ready) => this.ready(link, ready));
    channel.handle<WorkerRefusal>('refused', ({ message }) => this.refused(message));
    serveAdmission(channel, worker.id, this.admission);
    serveLimits(channel, worker.id, this.limits);
    if (this.responses) serveResponses(channel, worker.id, this.responses);
    channel.handle('metrics', () => this.metrics.text());
  }

  private get origin(): string {
    return this.options.sources.file ?? 'defaults';
  }

  private ready(link: WorkerLink, { port }: WorkerReady): void {
    link.ready = true;
    // A drain sent while it started came before it listened (IPC drops what no one listens to).
    if (this.stopping) {
      link.channel.notify('drain');
      return;
    }
    // A reload applied while it started passed it by.
    if (link.version !== this.version) void this.reloadWorker(link, plain(this.running), this.version);
    if (this.announced) {
      this.logger.info(`Worker ${link.pid} is serving.`);
      return;
    }
    if ([...this.links.values()].some((other) => !other.ready)) return;
    this.announced = true;
    const { host } = this.running.server;
    const models = this.running.models.map((model) => `${model.name} (${model.engine})`).join(', ');
    process.stdout.write(
      `Gantry listening on http://${host}:${port} — models: ${models} — workers: ${this.options.workers}\n`,
    );
  }

  /**
   * A worker refused the configuration at its start (its models, checked by their engine kinds):
   * before the instance is up, said once and the start fails; after, logged (it is started again).
   */
  private refused(message: string): null {
    if (this.announced) {
      this.logger.error(message);
      return null;
    }
    if (this.refusal === undefined) process.stderr.write(`${message}\n`);
    this.refusal ??= message;
    this.exitCode = 1;
    return null;
  }

  private async exited(link: WorkerLink, code: number | null, signal: string | null): Promise<void> {
    this.links.delete(link.worker.id);
    link.channel.close();
    const places = this.admission.releaseWorker(link.worker.id);
    const leases = await this.limits.releaseWorker(link.worker.id);
    this.responses?.releaseWorker(link.worker.id);
    const how = signal ? `signal ${signal}` : `code ${code}`;
    if (this.stopping) {
      if (code !== 0) this.exitCode = 1;
      if (this.links.size === 0) this.exit();
      return;
    }
    if (!this.announced) {
      if (this.refusal === undefined)
        this.logger.error(`Worker ${link.pid} exited (${how}) before the instance was up; stopping.`);
      this.exitCode = 1;
      this.stopAll('SIGKILL');
      return;
    }
    this.metrics.countRestart();
    const early = Date.now() - link.forkedAt < EARLY_DEATH_MS;
    this.earlyDeaths = early ? this.earlyDeaths + 1 : 0;
    const delayMs = early ? Math.min(5_000, 100 * 2 ** (this.earlyDeaths - 1)) : 0;
    this.logger.warn(
      `Worker ${link.pid} exited (${how}): its open streams ended; ${places} admission place(s) and ${leases} key lease(s) came back. Starting another${delayMs > 0 ? ` in ${delayMs} ms` : ''}.`,
    );
    const timer = setTimeout(() => {
      this.pendingForks.delete(timer);
      if (!this.stopping) this.fork();
    }, delayMs);
    this.pendingForks.add(timer);
  }

  /** The first SIGTERM or SIGINT drains every worker; a second ends their open streams now. */
  private shutdown(): void {
    if (this.stopping) {
      for (const link of this.links.values()) link.channel.notify('endNow');
      return;
    }
    this.stopping = true;
    this.unwatch();
    for (const timer of this.pendingForks) clearTimeout(timer);
    this.pendingForks.clear();
    for (const link of this.links.values()) link.channel.notify('drain');
    if (this.links.size === 0) return this.exit();
    setTimeout(() => {
      this.logger.error(
        `Workers still running ${this.running.shutdown.drainMs + EXIT_GRACE_MS} ms after the drain began; killing them.`,
      );
      this.exitCode = 1;
      this.stopAll('SIGKILL');
    }, this.running.shutdown.drainMs + EXIT_GRACE_MS).unref();
  }

  private stopAll(signal: NodeJS.Signals): void {
    this.stopping = true;
    for (const link of this.links.values()) link.worker.process.kill(signal);
    if (this.links.size === 0) this.exit();
  }

  private exit(): never {
    process.exit(this.exitCode);
  }

  /**
   * Re-reads the file as a start reads it; a refused file changes nothing. Every serving worker
   * applies it (its models), then the primary's admission limits follow; a worker that starts
   * later gets it too.
   */
  private reload(): void {
    if (this.stopping) return;
    // A reload that throws is logged, never an unhandled rejection (which would end the instance).
    this.reloads = this.reloads
      .then(() => this.reloadNow())
      .catch((error: unknown) =>
        this.logger.error(`Configuration reload failed: ${(error as Error)?.stack ?? String(error)}`),
      );
  }

  private async reloadNow(): Promise<void> {
    const file = this.options.sources.file;
    if (file === undefined) {
      this.logger.warn(
        'SIGHUP: there is no configuration file to re-read (start with --config FILE or GANTRY_CONFIG).',
      );
      return;
    }
    let next: GatewayConfig;
    try {
      next = await readReloadedConfig({ ...this.options.sources, file }, (reason, delayMs) =>
        this.logger.warn(unfinishedMessage(file, reason, delayMs)),
      );
    } catch (error) {
      this.logger.error(refusedMessage(error instanceof ConfigError ? error.message : (error as Error).message));
      return;
    }
    const serving = [...this.links.values()].filter((link) => link.ready);
    const version = this.version + 1;
    const outcomes = await Promise.all(serving.map((link) => this.reloadWorker(link, plain(next), version)));
    const applied = outcomes.flatMap((outcome) =>
      outcome !== undefined && 'changes' in outcome ? [outcome.changes] : [],
    );
    if (serving.length > 0 && applied.length === 0) {
      // The workers validate the models by their kinds, and run the same code: they refuse alike.
      const refusal = outcomes.find(
        (outcome): outcome is { refused: string } => outcome !== undefined && 'refused' in outcome,
      );
      if (refusal) this.logger.error(refusedMessage(refusal.refused));
      return;
    }
    this.replaceRefusing(serving, outcomes);
    const restartKeys = keysNeedingRestart(this.running, next);
    const liveKeys = liveKeysChanged(this.running, next);
    applyLiveKeys(this.running, next);
    this.version = version;
    this.admission.reconfigure(this.limitsOf(this.running));
    // Workers that became ready while the others applied it.
    for (const link of this.links.values()) {
      if (link.ready && link.version !== version && !serving.includes(link))
        void this.reloadWorker(link, plain(this.running), version);
    }
    const changes = applied[0] ?? { added: [], changed: [], removed: [] };
    this.logger.info(reloadedMessage(file, changes, ` on ${applied.length} of ${serving.length} workers`, liveKeys));
    if (restartKeys.length > 0) this.logger.warn(restartWarning(restartKeys));
  }

  /**
   * Workers that refused a configuration the others applied (an engine that would not start in
   * that process) would serve another one: each is named and drained, and the worker started in
   * its place runs the configuration the others applied.
   */
  private replaceRefusing(serving: readonly WorkerLink[], outcomes: ReadonlyArray<WorkerReload | undefined>): void {
    serving.forEach((link, index) => {
      const outcome = outcomes[index];
      if (outcome === undefined || !('refused' in outcome)) return;
      this.logger.error(
        `Worker ${link.pid} refused the configuration the other workers applied; it is replaced by one that runs it. ${outcome.refused}`,
      );
      link.channel.notify('drain');
    });
  }

  private reloadWorker(link: WorkerLink, config: unknown, version: number): Promise<WorkerReload | undefined> {
    return reloadWorker(link, config, version, this.running.server.reloadTimeoutMs, this.logger);
  }

  /** The admission limits the primary's configuration gives each model (engines it does not build count as unlimited). */
  private limitsOf(config: GatewayConfig): (model: string) => AdmissionLimits | undefined {
    const byName = new Map(config.models.map((model) => [model.name, admissionLimitsOf(model)]));
    return (model) => byName.get(model);
  }
}

/** A configuration as plain JSON, to be validated again on the other side. */
function plain(config: GatewayConfig): unknown {
  return JSON.parse(JSON.stringify(config));
}
