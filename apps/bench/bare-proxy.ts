/**
 * The bare proxy (bare-proxy-app.ts) as a program:
 *
 *   node dist/apps/bench/bare-proxy.js --upstream http://127.0.0.1:PORT/v1 --port 0 --host 127.0.0.1
 */
import { parseArgs } from 'node:util';
import { bareProxy } from './bare-proxy-app.js';

const { values } = parseArgs({
  options: {
    upstream: { type: 'string' },
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
  },
});
if (values.upstream === undefined) {
  process.stderr.write('Usage: node dist/apps/bench/bare-proxy.js --upstream URL [--port N] [--host H]\n');
  process.exit(2);
}
const proxy = bareProxy(values.upstream);
const address = await proxy.app.listen({ port: Number(values.port), host: values.host });
process.stdout.write(`bare proxy listening on ${address}\n`);
const stop = () => void proxy.close().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
