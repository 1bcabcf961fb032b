/**
 * One side of a paired A/B (paired-ab.ts): a gateway built from the checkout at `root` (its
 * `dist/`), serving the benchmark's models on a loopback port, or with `--bare` the bare proxy
 * (bare-proxy-app.ts, this checkout's) in front of the mock, the floor the gateways are read
 * against. It prints `{"port": N}`, then answers one line of JSON per command on stdin: `start`
 * and `stop` (the process's CPU time in between, µs), `heap` (heap used after full collections;
 * needs `--expose-gc`), `quit`.
 *
 *   node [--expose-gc] dist/apps/bench/paired-ab-worker.js ROOT [MOCK_URL]
 *   node dist/apps/bench/paired-ab-worker.js --bare MOCK_URL
 */
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { bareProxy } from './bare-proxy-app.js';
import { benchModels, gatewayConfig } from './gateway-configs.js';

interface Server {
  listen(port: number, host: string): Promise<unknown>;
  getHttpServer(): { address(): { port: number } };
  close(): Promise<void>;
}

const [root, mockUrl] = process.argv.slice(2);
const app = root === '--bare' ? await startBare(mockUrl) : await startGateway(root, mockUrl);
await app.listen(0, '127.0.0.1');

async function startGateway(root: string, mockUrl: string | undefined): Promise<Server> {
  const load = (path: string) => import(pathToFileURL(resolve(root, path)).href);
  const { createGateway } = (await load('dist/src/bootstrap.js')) as {
    createGateway(config: unknown, options: unknown): Promise<Server>;
  };
  const { parseConfig } = (await load('dist/src/config/config-loader.js')) as {
    parseConfig(raw: unknown, source: string): unknown;
  };
  const models = benchModels(mockUrl ?? 'http://127.0.0.1:9/v1').filter(
    (model) => mockUrl !== undefined || model.engine === 'stub',
  );
  const config = parseConfig(gatewayConfig({ models }), 'paired-ab');
  // Log lines are made as in production and dropped: the measure is the gateway's, not the terminal's.
  const discard = new Writable({ write: (_chunk, _encoding, done) => done() });
  return createGateway(config, { observability: { logDestination: discard } });
}

async function startBare(mockUrl: string): Promise<Server> {
  const proxy = bareProxy(mockUrl);
  return {
    listen: (port, host) => proxy.app.listen({ port, host }),
    getHttpServer: () => proxy.app.server as unknown as { address(): { port: number } },
    close: () => proxy.close(),
  };
}

const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};
const collect = (global as { gc?: () => void }).gc;
const reply = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);

reply({ port: app.getHttpServer().address().port });
let startedAt = 0;
for await (const command of createInterface({ input: process.stdin })) {
  if (command === 'start') {
    startedAt = cpuMicros();
    reply({});
  } else if (command === 'stop') {
    reply({ cpuMicros: cpuMicros() - startedAt });
  } else if (command === 'heap') {
    for (let pass = 0; pass < 4; pass += 1) {
      collect?.();
      await new Promise((settle) => setTimeout(settle, 50));
    }
    reply({ heapUsed: process.memoryUsage().heapUsed });
  } else if (command === 'quit') {
    break;
  }
}
await app.close();
process.exit(0);
