import { parseArgs } from 'node:util';
import { Logger } from '@nestjs/common';
import { ConfigError, loadConfig, type ConfigSources } from './config/config-loader.js';
import { createGateway } from './bootstrap.js';
import { endStreamsNow, shutdownGracefully } from './lifecycle/graceful-shutdown.js';
import { ModelRegistry } from './models/model-registry.js';
import { flushLogs } from './observability/logging/logging.module.js';
import { fileStatus, watchConfigFile } from './reload/config-file-watcher.js';
import { ConfigReloader } from './reload/config-reloader.js';

const USAGE = `Usage: npm start -- [--config FILE] [--port N] [--host H] [--watch-config]

  --config FILE     YAML configuration (or GANTRY_CONFIG); without one, the stub model is served
  --port N          listening port (or GANTRY_PORT; default 8000)
  --host H          listening address (or GANTRY_HOST; default 127.0.0.1)
  --watch-config    re-read FILE whenever it changes, as SIGHUP does (models added, removed or
                    changed serve new requests; open streams finish where they started)`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      config: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'watch-config': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const portText = values.port ?? process.env.GANTRY_PORT;
  const port = portText === undefined ? undefined : Number(portText);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
    throw new ConfigError('command line', [`--port must be an integer from 0 to 65535 (got ${JSON.stringify(portText)})`]);
  }
  const sources: ConfigSources = {
    file: values.config ?? process.env.GANTRY_CONFIG,
    host: values.host ?? process.env.GANTRY_HOST,
    port,
    responsesEncryptionKey: process.env.GANTRY_RESPONSES_ENCRYPTION_KEY || undefined,
  };
  if (values['watch-config'] && sources.file === undefined) {
    throw new ConfigError('command line', ['--watch-config needs a configuration file (--config FILE or GANTRY_CONFIG)']);
  }
  // Taken before the file is read: a change made while the gateway starts is not missed.
  const readStatus = values['watch-config'] ? fileStatus(sources.file!) : undefined;
  const config = loadConfig(sources);

  const app = await createGateway(config);
  await app.listen(config.server.port, config.server.host);
  const address = app.getHttpServer().address();
  const where = typeof address === 'object' && address ? `http://${config.server.host}:${address.port}` : String(address);
  const models = config.models.map((model) => `${model.name} (${model.engine})`).join(', ');
  process.stdout.write(`Gantry listening on ${where} — models: ${models}\n`);

  let stopping = false;
  // SIGHUP (and --watch-config) re-read the file: models apply to new requests at once; a file
  // refused at start is refused here with the same messages, and the running configuration stays.
  const reloader = new ConfigReloader(config, app.get(ModelRegistry));
  let reloads: Promise<unknown> = Promise.resolve();
  const reload = () => {
    if (stopping) return;
    if (sources.file === undefined) {
      new Logger('Gantry').warn('SIGHUP: there is no configuration file to re-read (start with --config FILE or GANTRY_CONFIG).');
      return;
    }
    reloads = reloads.then(() => reloader.reload(() => loadConfig(sources), sources.file!));
  };
  process.on('SIGHUP', reload);
  const unwatch = values['watch-config'] ? watchConfigFile(sources.file!, reload, { since: readStatus }) : () => undefined;

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
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
  } else if (String((error as { code?: unknown })?.code).startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
  } else {
    process.stderr.write(`Gantry failed to start: ${(error as Error)?.stack ?? String(error)}\n`);
  }
  process.exit(1);
});
