import cluster from 'node:cluster';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AdmissionCoordinator } from './admission/model-admission.js';
import { ApiKeyRing } from './auth/api-key-ring.js';
import { InstanceLimitStore } from './auth/limit-store.js';
import { createGateway } from './bootstrap.js';
import { ClusterAdmission } from './cluster/cluster-admission.js';
import { ClusterMetricsExposition } from './cluster/cluster-metrics.js';
import { connectToPrimary } from './cluster/primary-link.js';
import { PrimaryLimitStore } from './cluster/primary-limit-store.js';
import { PrimaryResponseStore } from './cluster/primary-response-store.js';
import type { WorkerHello, WorkerReady, WorkerRefusal, WorkerReload } from './cluster/worker-protocol.js';
import { ConfigError } from './config/config-error.js';
import { parseConfig } from './config/config-loader.js';
import { EngineKinds } from './engines/engine-kinds.js';
import { EngineStartError } from './models/engine-start.js';
import { endStreamsNow, shutdownGracefully } from './lifecycle/graceful-shutdown.js';
import { ModelRegistry } from './models/model-registry.js';
import { flushLogs } from './observability/logging/logging.module.js';
import { GantryMetrics } from './observability/metrics/gantry-metrics.js';
import { MetricsExposition } from './observability/metrics/metrics-exposition.js';
import { ConfigReloader } from './reload/config-reloader.js';
import { InstanceResponseStore } from './stored-responses/response-store.js';

/** Names the worker that answered, on every response: which process served what, for operators and tests. */
export const WORKER_HEADER = 'x-gantry-worker';

/**
 * One worker of `server.workers: N > 1`: a whole gateway on the port the cluster shares, with the
 * configuration its primary gives it, admission, `store: memory` limits and stored responses through the primary,
 * and `/metrics` answered for the whole instance. It applies the reloads the primary sends, and
 * drains when the primary says so (or is gone); signals sent to it alone drain it as well, and
 * the primary starts another.
 */
export async function serveAsWorker(): Promise<void> {
  let app: NestFastifyApplication | undefined;
  let draining = false;
  const drain = () => {
    if (draining) return;
    draining = true;
    if (app === undefined) process.exit(0);
    void shutdownGracefully(app).then(
      () => flushLogs().then(() => process.exit(0)),
      (error: unknown) => {
        process.stderr.write(`Gantry failed to shut down cleanly: ${(error as Error)?.stack ?? String(error)}\n`);
        process.exit(1);
      },
    );
  };
  let admission: ClusterAdmission | undefined;
  let responses: PrimaryResponseStore | undefined;
  // The primary is gone: requests waiting for its word fail, and the worker drains.
  const channel = connectToPrimary(() => {
    admission?.close();
    responses?.primaryGone();
    drain();
  });
  // The primary drains its workers and escalates itself: a signal sent to the whole process group
  // (Ctrl-C) must not count twice here. SIGHUP reloads go through the primary.
  process.on('SIGTERM', drain);
  process.on('SIGINT', drain);
  process.on('SIGHUP', () => undefined);
  channel.on('drain', drain);
  channel.on('endNow', () => app && endStreamsNow(app));

  const hello = await channel.call<WorkerHello>('hello');
  const config = parseConfig(hello.config, hello.origin);
  admission = new ClusterAdmission(channel);
  responses = config.responses.store === 'memory' ? new PrimaryResponseStore(channel) : undefined;
  app = await createGateway(config, {
    origin: hello.origin,
    providers: [
      { provide: AdmissionCoordinator, useValue: admission },
      { provide: InstanceLimitStore, useValue: new PrimaryLimitStore(channel) },
      { provide: MetricsExposition, useValue: new ClusterMetricsExposition(channel) },
      ...(responses ? [{ provide: InstanceResponseStore, useValue: responses }] : []),
    ],
    // Said once for the instance: by the first worker forked (cluster ids count from 1).
    instanceWarnings: cluster.worker?.id === 1,
  });
  const pid = String(process.pid);
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRequest', (_request, reply, done) => {
      void reply.header(WORKER_HEADER, pid);
      done();
    });
  try {
    await app.listen(config.server.port, config.server.host);
  } catch (error) {
    // The primary knows no engine kind (it loads no plugin): the workers validate the models and
    // start their engines, and the primary says why the instance does not start, once.
    if (!(error instanceof ConfigError || error instanceof EngineStartError)) throw error;
    await channel.call('refused', { message: error.message } satisfies WorkerRefusal);
    process.exit(1);
  }

  const reloader = new ConfigReloader(config, app.get(ModelRegistry), app.get(EngineKinds), {
    keys: app.get(ApiKeyRing),
  });
  const metrics = app.get(GantryMetrics);
  channel.handle('collect', () => metrics.registry.getMetricsAsJSON());
  channel.handle<{ config: unknown }>('reload', async ({ config: next }): Promise<WorkerReload> => {
    try {
      return { changes: (await reloader.apply(parseConfig(next, hello.origin), hello.origin)).changes };
    } catch (error) {
      // A file its kinds refuse, or an engine that cannot start here: either refuses the reload.
      return { refused: error instanceof Error ? error.message : String(error) };
    }
  });
  if (draining) return;
  const address = app.getHttpServer().address();
  const ready: WorkerReady = {
    port: typeof address === 'object' && address ? address.port : config.server.port,
    version: hello.version,
  };
  channel.notify('ready', ready);
}
