import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config/config-loader.js';
import { createGateway } from './bootstrap.js';
import { endStreamsNow, shutdownGracefully } from './lifecycle/graceful-shutdown.js';
import { flushLogs } from './observability/logging/logging.module.js';

const USAGE = `Usage: npm start -- [--config FILE] [--port N] [--host H]

  --config FILE   YAML configuration (or GANTRY_CONFIG); without one, the stub model is served
  --port N        listening port (or GANTRY_PORT; default 8000)
  --host H        listening address (or GANTRY_HOST; default 127.0.0.1)`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      config: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
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
  const config = loadConfig({
    file: values.config ?? process.env.GANTRY_CONFIG,
    host: values.host ?? process.env.GANTRY_HOST,
    port,
    responsesEncryptionKey: process.env.GANTRY_RESPONSES_ENCRYPTION_KEY || undefined,
  });

  const app = await createGateway(config);
  await app.listen(config.server.port, config.server.host);
  const address = app.getHttpServer().address();
  const where = typeof address === 'object' && address ? `http://${config.server.host}:${address.port}` : String(address);
  const models = config.models.map((model) => `${model.name} (${model.engine})`).join(', ');
  process.stdout.write(`Gantry listening on ${where} — models: ${models}\n`);

  // The first signal drains (new requests refused, open streams get shutdown.drainMs to finish);
  // a second one ends the streams still open at once.
  let stopping = false;
  const shutdown = () => {
    if (stopping) return endStreamsNow(app);
    stopping = true;
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
