#!/usr/bin/env node
import cluster from 'node:cluster';
import { parseArgs } from 'node:util';
import { ConfigError } from './config/config-error.js';
import { loadConfig, type ConfigSources } from './config/config-loader.js';
import { workerCount } from './config/server-config.js';
import { fileStatus } from './reload/config-file-watcher.js';

const USAGE = `Usage: gantry [--config FILE] [--port N] [--host H] [--watch-config]
       (from a clone of the repository: npm start -- [options])

  --config FILE     YAML configuration (or GANTRY_CONFIG); without one, the stub model is served
  --port N          listening port (or GANTRY_PORT; default 8000)
  --host H          listening address (or GANTRY_HOST; default 127.0.0.1)
  --watch-config    re-read FILE whenever it changes, as SIGHUP does (models added, removed or
                    changed serve new requests; open streams finish where they started)`;

/**
 * SIGHUP means "reload" to a running gateway; until the process can reload, one is held here
 * (Node's default action would end the process) and given to the handler the start installs.
 */
let hupWhileStarting = false;
const holdHup = () => {
  hupWhileStarting = true;
};

/** Ends the start's hold on SIGHUP, replaying one that came meanwhile to the handlers now installed. */
function releaseHup(): void {
  process.off('SIGHUP', holdHup);
  if (hupWhileStarting && process.listenerCount('SIGHUP') > 0) process.emit('SIGHUP', 'SIGHUP');
}

async function main(): Promise<void> {
  process.on('SIGHUP', holdHup);
  // A worker of several runs this file too: its primary gives it everything it needs.
  if (cluster.isWorker) {
    const { serveAsWorker } = await import('./cluster-worker.js');
    return serveAsWorker();
  }
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

  const watch = values['watch-config'] === true;
  const workers = workerCount(config.server);
  // Each mode loads only what it runs: the primary no gateway, one process no cluster.
  if (workers > 1) {
    const { runPrimary } = await import('./cluster/primary.js');
    runPrimary(config, { workers, sources, watch, since: readStatus });
    return releaseHup();
  }
  const { serveSingleProcess } = await import('./single-process.js');
  await serveSingleProcess(config, { sources, watch, since: readStatus });
  releaseHup();
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
