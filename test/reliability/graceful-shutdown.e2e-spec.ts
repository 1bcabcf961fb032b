import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { LifecycleService } from '../../src/lifecycle/lifecycle.service.js';
import { startCli, writeConfig } from '../support/cli-process.js';
import { eventually, readJson, startGateway } from '../support/gateway.js';
import { postStream, unpooledAgent } from '../support/http-stream.js';
import { CHAT, MESSAGES, PROTOCOLS } from '../support/protocol-streams.js';

describe('graceful shutdown', () => {
  it('answers new requests with 503 in the protocol shape while draining, reports not ready, and keeps /health up', async () => {
    const draining = await startGateway({ models: [{ name: 'stub', engine: 'stub' }] });
    try {
      expect((await fetch(`${draining.url}/ready`)).status).toBe(200);
      draining.app.get(LifecycleService).beginDrain();
      const readiness = await fetch(`${draining.url}/ready`);
      expect(readiness.status).toBe(503);
      expect(await readJson(readiness)).toMatchObject({ status: 'draining' });
      const chat = await postStream(draining.url, CHAT.path, CHAT.body('stub', 'too late'));
      expect(chat.status).toBe(503);
      expect(chat.headers.connection).toBe('close');
      expect(chat.headers['retry-after']).toBe('1');
      expect(JSON.parse(chat.body)).toEqual({
        error: {
          message: expect.stringMatching(/shutting down/),
          type: 'server_error',
          param: null,
          code: 'shutting_down',
        },
      });
      const messages = await postStream(draining.url, MESSAGES.path, MESSAGES.body('stub', 'too late'));
      expect(messages.status).toBe(503);
      expect(JSON.parse(messages.body)).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
      expect((await fetch(`${draining.url}/health`)).status).toBe(200);
    } finally {
      await draining.close();
    }
  });

  it('on SIGTERM during 50 open streams: refuses new connections, ends every stream cleanly, exits 0', async () => {
    const drainMs = 1500;
    const file = writeConfig(
      [
        'keepalive: { mode: chunks, intervalMs: 200 }',
        `shutdown: { drainMs: ${drainMs} }`,
        'models:',
        '  - { name: slow, engine: stub, prefillMs: 50, tokenIntervalMs: 100 }',
      ].join('\n'),
    );
    const cli = startCli(['--config', file, '--port', '0']);
    try {
      const url = await cli.listening;
      const agent = unpooledAgent();
      let decoding = 0;
      const streams = Array.from({ length: 50 }, (_, index) => {
        const protocol = PROTOCOLS[index % PROTOCOLS.length];
        const short = index < 25;
        const words = Array.from({ length: short ? 6 : 100 }, (_, word) => `t${index}w${word}`).join(' ');
        let counted = false;
        const outcome = postStream(url, protocol.path, protocol.body('slow', words), {
          agent,
          onFrame: (frame) => {
            if (!counted && protocol.isContent(frame)) {
              counted = true;
              decoding += 1;
            }
          },
        }).then((result) => ({ result, endedAt: performance.now() }));
        return { protocol, short, words, outcome };
      });
      expect(await eventually(() => decoding === 50, 10_000)).toBe(true);

      const signalledAt = performance.now();
      cli.child.kill('SIGTERM');
      const port = Number(new URL(url).port);
      expect(await connectionRefused(port)).toBe(true);

      const endings = await Promise.all(streams.map((stream) => stream.outcome));
      const exitCode = await cli.exited;
      const exitedAfterMs = performance.now() - signalledAt;
      const problems: string[] = [];
      for (const [index, { protocol, short, words }] of streams.entries()) {
        const { result, endedAt } = endings[index];
        const where = `stream ${index} (${protocol.api}, ${short ? 'short' : 'long'})`;
        if (result.status !== 200 || result.end !== 'server') {
          problems.push(`${where}: status ${result.status}, ended by ${result.end} ${result.error ?? ''}`);
        } else if (short) {
          if (!protocol.endedWell(result.frames)) problems.push(`${where}: did not finish within the drain`);
          else if (result.frames.filter(protocol.isContent).map(protocol.contentOf).join('') !== words)
            problems.push(`${where}: wrong text`);
        } else {
          if (!/shutting down/.test(protocol.errorMessage(result.frames) ?? ''))
            problems.push(`${where}: no shutdown error frame`);
          if (endedAt - signalledAt < drainMs - 100) problems.push(`${where}: cut before the drain deadline`);
        }
      }
      expect(problems).toEqual([]);
      expect(exitCode).toBe(0);
      // The long streams would take 10 s more: the drain deadline, not their end, let it exit.
      expect(exitedAfterMs).toBeLessThan(drainMs + 5_000);
      expect(cli.output().stderr).toBe('');
    } finally {
      cli.child.kill('SIGKILL');
    }
  }, 30_000);
});

/** Whether a new TCP connection to the port is refused, retried for up to five seconds. */
async function connectionRefused(port: number): Promise<boolean> {
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    const outcome = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    });
    if (outcome === 'ECONNREFUSED') return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}
