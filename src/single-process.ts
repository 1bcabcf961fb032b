import type { Stats } from 'node:fs';
import { Logger } from '@nestjs/common';
import { ApiKeyRing } from './auth/api-key-ring.js';
import { createGateway } from './bootstrap.js';
import type { ConfigSources } from './config/config-loader.js';
import { startWarnings } from './config/config-warnings.js';
import { EngineKinds } from './engines/engine-kinds.js';
import type { GatewayConfig } from './config/gateway-config.js';
import { endStreamsNow, shutdownGracefully } from './lifecycle/graceful-shutdown.js';
import { ModelRegistry } from './models/model-registry.js';
import { flushLogs } from './observability/logging/logging.module.js';
import { watchConfigFile } from './reload/config-file-watcher.js';
import { ConfigReloader } from './reload/config-reloader.js';
import { unfinishedMessage } from './reload/reload-messages.js';
import { readReloadedConfig } from './reload/reloaded-config.js';

export interface SingleProcessOptions {
  sources: ConfigSources;
  /** `--watch-config`: re-read the file when it changes, as SIGHUP does. */
  watch: boolean;
  /** The file's status before it was read, so that a change during the start is not missed. */
  since?: Stats;
}

/** The gateway as one process (`server.workers: 1`): serve, reload on SIGHUP, drain on SIGTERM/SIGINT. */
export async function serveSingleProcess(
  config: GatewayConfig,
  { sources, watch, since }: SingleProcessOptions,
): Promise<void> {
  const app = await createGateway(config, { origin: sources.file ?? 'defaults' });
  for (const warning of startWarnings(config)) new Logger('Gantry').warn(warning);
  await app.listen(config.server.port, config.server.host);
  const address = app.getHttpServer().address();
  const where =
    typeof address === 'object' && address ? `http://${config.server.host}:${address.port}` : String(address);
  const models = config.models.map((model) => `${model.name} (${model.engine})`).join(', ');

  let stopping = false;
  // SIGHUP (and --watch-config) re-read the file: models apply to new requests at once; a file
  // refused at start is refused here with the same messages, and the running configuration stays.
  const reloader = new ConfigReloader(config, app.get(ModelRegistry), app.get(EngineKinds), {
    keys: app.get(ApiKeyRing),
  });
  let reloads: Promise<unknown> = Promise.resolve();
  const reload = () => {
    if (stopping) return;
    if (sources.file === undefined) {
      new Logger('Gantry').warn(
        'SIGHUP: there is no configuration file to re-read (start with --config FILE or GANTRY_CONFIG).',
      );
      return;
    }
    const file = sources.file;
    const onRetry = (reason: string, delayMs: number) =>
      new Logger('Gantry').warn(unfinishedMessage(file, reason, delayMs));
    reloads = reloads.then(() => reloader.reload(() => readReloadedConfig({ ...sources, file }, onRetry), file));
  };
  process.on('SIGHUP', reload);
  const unwatch =
    watch && sources.file !== undefined ? watchConfigFile(sources.file, reload, { since }) : () => undefined;

  // The first signal drains (new requests refused, open streams get shutdown.drainMs to finish);
  // a second one ends the streams still open at once.
  const shutdown = () => {
    if (stopping) return endStreamsNow(app);
    stopping = true;
    unwatch();
    void shutdownGracefully(app).then(
      () => flushLogs().then(() => process.exit(0)),
      (error: unknown) => {
        process.stderr.write(`Gantry failed to shut down cleanly: ${(error as Error)?.stack ?? String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
  process.stdout.write(`Gantry listening on ${where} — models: ${models}\n`);
}
