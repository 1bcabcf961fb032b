import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { Pool, type Dispatcher } from 'undici';
import { MOCK_BEHAVIOUR_HEADER } from './gateway-configs.js';

/**
 * The benchmark's "bare proxy": a reference, not a product. `POST /v1/chat/completions` (and
 * `/v1/completions`, `/v1/embeddings`) on
 * Fastify (default JSON parser) forwarded to one upstream by one undici Pool with `dispatch`, and
 * nothing else (no validation, RxJS, logging, metrics or tracing), so that the bench shows what
 * any Node gateway built on these two libraries reaches on the machine: the floor for Gantry.
 * The mock's behaviour header, when a client sends one, goes along, so that the bench picks the
 * mock's way of writing for it as a gateway model's `headers` do.
 */
export function bareProxy(upstreamBaseUrl: string): { app: FastifyInstance; close(): Promise<void> } {
  const upstream = new URL(upstreamBaseUrl);
  const base = upstream.pathname.replace(/\/+$/, '');
  const pool = new Pool(upstream.origin);
  const app = Fastify();

  // Chat, and the completions and embeddings scenarios' routes, each to the same route upstream.
  const forward = (route: string) => (request: FastifyRequest, reply: FastifyReply) => {
    const upstreamPath = `${base}/${route}`;
    const stream = (request.body as { stream?: unknown }).stream === true;
    const chunks: Buffer[] = [];
    let controller: Dispatcher.DispatchController | undefined;
    let status = 0;
    let finished = false;
    let gone = false;
    if (stream) reply.hijack();
    // The client hung up before the answer ended: abort the upstream request (closing its socket).
    reply.raw.once('close', () => {
      if (finished || reply.raw.writableFinished) return;
      gone = true;
      controller?.abort(new Error('The client went away.'));
    });
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(started) {
        controller = started;
        if (gone) started.abort(new Error('The client went away.'));
      },
      onResponseStart(_controller, statusCode) {
        status = statusCode;
        if (stream)
          reply.raw.writeHead(statusCode, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      },
      onResponseData(_controller, chunk) {
        if (stream) reply.raw.write(chunk);
        else chunks.push(chunk);
      },
      onResponseEnd() {
        finished = true;
        if (stream) return void reply.raw.end();
        const answer = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
        if (status !== 200) return void reply.code(status).send(answer);
        const { id, object, created, model, choices, data, usage } = answer;
        reply.send({ id, object, created, model, choices, data, usage });
      },
      onResponseError(_controller, error) {
        finished = true;
        if (gone) return;
        if (stream || reply.sent) reply.raw.destroy(error);
        else reply.code(502).send({ error: { message: error.message } });
      },
    };
    const behaviour = request.headers[MOCK_BEHAVIOUR_HEADER];
    pool.dispatch(
      {
        path: upstreamPath,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: stream ? 'text/event-stream' : 'application/json',
          ...(typeof behaviour === 'string' ? { [MOCK_BEHAVIOUR_HEADER]: behaviour } : {}),
        },
        body: JSON.stringify(request.body),
      },
      handler,
    );
  };
  for (const route of ['chat/completions', 'completions', 'embeddings']) app.post(`/v1/${route}`, forward(route));

  return {
    app,
    close: async () => {
      await Promise.all([app.close(), pool.close()]);
    },
  };
}
