#!/usr/bin/env node
import cluster from 'node:cluster';
import { parseArgs } from 'node:util';
import { ConfigError } from './config/config-error.js';
import { loadConfig, type ConfigSources } from './config/config-loader.js';
import { workerCount } from './config/server-config.js';
import { EngineStartError } from './models/engine-start.js';
import { fileStatus } from './reload/config-file-watcher.js';

const USAGE = `Usage: gantry [--config FILE] [--port N] [--host H] [--watch-config]
       gantry check-config FILE [--port N] [--host H]
       (from a clone of the repository: npm start -- [options], npm start -- check-config FILE)

  --config FILE     YAML configuration (or GANTRY_CONFIG); without one, the stub model is served
  --port N          listening port (or GANTRY_PORT; default 8000)
  --host H          listening address (or GANTRY_HOST; default 127.0.0.1)
  --watch-config    re-read FILE whenever it changes, as SIGHUP does (models added, removed or
                    changed serve new requests; open streams finish where they started)

  check-config FILE validates FILE as a start does (each model by its engine kind, plugins loaded)
                    without listening or starting an engine, prints the effective configuration
                    (defaults filled in, secrets masked) and exits 0; on a bad file, exits 1 with
                    the messages a start gives`;

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
  if (process.argv[2] === 'check-config') return checkConfigCommand(process.argv.slice(3));
  const { values } = parseArgs({
    options: {
      config: { type: 'string' },
      ...ADDRESS_OPTIONS,
      'watch-config': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const sources = sourcesOf(values.config ?? process.env.GANTRY_CONFIG, values);
  if (values['watch-config'] && sources.file === undefined) {
    throw new ConfigError('command line', [
      '--watch-config needs a configuration file (--config FILE or GANTRY_CONFIG)',
    ]);
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

/** `--port` and `--host`, which a start and a check read alike. */
const ADDRESS_OPTIONS = { port: { type: 'string' }, host: { type: 'string' } } as const;

/** Where the configuration comes from: the file, then the flags and the environment over it, as at start. */
function sourcesOf(file: string | undefined, flags: { port?: string; host?: string }): ConfigSources {
  const portText = flags.port ?? process.env.GANTRY_PORT;
  const port = portText === undefined ? undefined : Number(portText);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
    throw new ConfigError('command line', [
      `--port must be an integer from 0 to 65535 (got ${JSON.stringify(portText)})`,
    ]);
  }
  return {
    file,
    host: flags.host ?? process.env.GANTRY_HOST,
    port,
    responsesEncryptionKey: process.env.GANTRY_RESPONSES_ENCRYPTION_KEY || undefined,
  };
}

/**
 * `gantry check-config FILE`: the file validated as a start validates it, the effective
 * configuration on stdout (a YAML document), what a start would warn of on stderr, exit 0; a
 * refusal exits 1 with the start's messages (main's catch).
 */
async function checkConfigCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args, options: ADDRESS_OPTIONS, allowPositionals: true });
  if (positionals.length !== 1)
    throw new ConfigError('command line', ['check-config takes one configuration file: gantry check-config FILE']);
  const [file] = positionals as [string];
  const { checkConfig } = await import('./check-config.js');
  const { yaml, warnings } = await checkConfig({ ...sourcesOf(file, values), file });
  for (const warning of warnings) process.stderr.write(`Warning: ${warning}\n`);
  process.stdout.write(`# ${file}: valid. The effective configuration, defaults filled in, secrets masked:\n${yaml}`);
  // The gateway's modules were built to find the engine kinds: nothing of them is to wait for.
  process.exit(0);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
  } else if (error instanceof EngineStartError) {
    process.stderr.write(`Gantry failed to start: ${error.message}\n`);
  } else if (String((error as { code?: unknown })?.code).startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
  } else {
    process.stderr.write(`Gantry failed to start: ${(error as Error)?.stack ?? String(error)}\n`);
  }
  process.exit(1);
});
