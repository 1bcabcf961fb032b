import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { planAnswer, promptTokensOf, textOf } from './mock-answer.js';
import { BEHAVIOUR_HEADER, behaviourFor, DEFAULT_BEHAVIOUR, type MockBehaviour } from './mock-behaviour.js';
import { answerJson, mockError, sendJson } from './mock-chat-json.js';
import { streamAnswer } from './mock-chat-stream.js';
import { MockPrefixCache, planPrefill, PrefillLane } from './mock-prefix-cache.js';
import { MockScheduler } from './mock-scheduler.js';
import { answerMetrics } from './mock-metrics.js';
import { answerTokenize } from './mock-tokenize.js';
import { answerPooling, MOCK_POOLING_ROUTES, type MockPoolingRoute } from './mock-pooling.js';

export interface MockUpstreamOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  behaviour?: Partial<MockBehaviour>;
  /** When set, requests for another model get vLLM's 404. */
  servedModel?: string;
  /** Received requests kept for inspection (the oldest are dropped). */
  recordLimit?: number;
  /** Serve `GET /health` (default true); false emulates Ollama, LM Studio and hosted APIs. */
  healthRoute?: boolean;
  /** Serve `GET /v1/models` (default true). */
  modelsRoute?: boolean;
  /** Serve Ollama's `GET /api/tags` (default false). */
  tagsRoute?: boolean;
}

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** What the mock has seen; tests assert on it (a gateway hang-up must bring `openRequests` to 0). */
export interface MockState {
  received: ReceivedRequest[];
  /** Chat requests whose response has neither finished nor been closed. */
  openRequests: number;
  /** Open requests still in prefill (`vllm:num_requests_waiting`); the rest are running. */
  waitingRequests: number;
  chatRequests: number;
  completedRequests: number;
  /** Closed before the response finished: client hang-ups (and injected drops). */
  abortedRequests: number;
  healthChecks: number;
  /** GET requests by path (health probes among them), answered or not. */
  gets: Record<string, number>;
}

export interface MockUpstream {
  /** The base URL a gateway is configured with, `/v1` included. */
  url: string;
  port: number;
  state: MockState;
  /** The server's prefix cache (used by requests whose behaviour sets `prefixCacheTokens`). */
  prefixCache: MockPrefixCache;
  behaviour(): MockBehaviour;
  /** Merges keys into the server's behaviour, for every later request. */
  setBehaviour(changes: Partial<MockBehaviour>): void;
  resetBehaviour(): void;
  /** Stops listening and drops every open connection: new connections are refused. */
  refuseConnections(): Promise<void>;
  /** Listens again on the same port. */
  acceptConnections(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts a vLLM-style OpenAI-compatible server on loopback: `POST /v1/chat/completions`
 * (streaming and not), `GET /v1/models`, `GET /health`, `GET /metrics`. See README.md.
 */
export async function startMockUpstream(options: MockUpstreamOptions = {}): Promise<MockUpstream> {
  const host = options.host ?? '127.0.0.1';
  const modelName = options.servedModel ?? 'mock-model';
  const recordLimit = options.recordLimit ?? 1000;
  const initial: MockBehaviour = { ...DEFAULT_BEHAVIOUR, ...options.behaviour };
  let behaviour = initial;
  let sequence = 0;
  const prefixCache = new MockPrefixCache();
  const prefillLane = new PrefillLane();
  const scheduler = new MockScheduler(() => behaviour.maxRunning);
  const state: MockState = {
    received: [],
    openRequests: 0,
    waitingRequests: 0,
    chatRequests: 0,
    completedRequests: 0,
    abortedRequests: 0,
    healthChecks: 0,
    gets: {},
  };

  const chat = async (request: IncomingMessage, response: ServerResponse, completion = false) => {
    let body: Record<string, unknown>;
    let requestBehaviour: MockBehaviour;
    try {
      body = JSON.parse(await readBody(request)) as Record<string, unknown>;
      requestBehaviour = behaviourFor(behaviour, request.headers[BEHAVIOUR_HEADER]);
    } catch (error) {
      return sendJson(response, 400, mockError(400, (error as Error).message));
    }
    state.received.push({ path: request.url ?? '', headers: request.headers, body });
    if (state.received.length > recordLimit) state.received.shift();
    // A raw completion is planned as a chat whose user message is its prompt (the mock echoes it), without reasoning.
    if (completion) body = completionAsChat(body);
    if (options.servedModel !== undefined && body.model !== options.servedModel) {
      return sendJson(response, 404, mockError(404, `The model \`${String(body.model)}\` does not exist.`));
    }
    // As vLLM: a continued final message must not get a new assistant turn after it (its default).
    if (body.continue_final_message === true && body.add_generation_prompt !== false) {
      return sendJson(
        response,
        400,
        mockError(400, 'Cannot set both `continue_final_message` and `add_generation_prompt` to True.'),
      );
    }
    const failureMessage = failureMessageOf(requestBehaviour, request.headers, body);
    if (requestBehaviour.failure === 'status' || chokesOn(requestBehaviour, body)) {
      return sendJson(
        response,
        requestBehaviour.failureStatus,
        mockError(requestBehaviour.failureStatus, failureMessage),
      );
    }
    const promptTokens = promptTokensOf(body);
    if (requestBehaviour.maxModelLen !== undefined && promptTokens > requestBehaviour.maxModelLen) {
      const message = `This model's maximum context length is ${requestBehaviour.maxModelLen} tokens. However, your request has ${promptTokens} input tokens. Please reduce the length of the input messages.`;
      return sendJson(response, 400, mockError(400, message));
    }

    sequence += 1;
    state.chatRequests += 1;
    state.openRequests += 1;
    state.waitingRequests += 1;
    let waiting = true;
    const onDecoding = () => {
      if (waiting) state.waitingRequests -= 1;
      waiting = false;
    };
    const abort = new AbortController();
    let release: (() => void) | undefined;
    response.once('close', () => {
      release?.();
      onDecoding();
      state.openRequests -= 1;
      if (response.writableFinished) state.completedRequests += 1;
      else state.abortedRequests += 1;
      abort.abort();
    });
    let answer = planAnswer(body, requestBehaviour, `chatcmpl-tool-mock${sequence}`);
    let replyBehaviour = requestBehaviour;
    const prefill = planPrefill(body, requestBehaviour, prefixCache, prefillLane);
    if (prefill) {
      answer = { ...answer, promptTokens: prefill.promptTokens, cachedTokens: prefill.cachedTokens };
      replyBehaviour = { ...requestBehaviour, prefillMs: prefill.prefillMs };
    }
    const common = {
      response,
      answer,
      behaviour: replyBehaviour,
      id: `chatcmpl-mock${sequence}`,
      created: Math.floor(Date.now() / 1000),
      model: typeof body.model === 'string' ? body.model : modelName,
      signal: abort.signal,
      // Only a prefill that ran to its end leaves its blocks in the cache (a hang-up during it does not).
      onDecoding: () => {
        prefill?.prefilled();
        onDecoding();
      },
      failureMessage,
      completion,
      logprobs: completion && typeof body.logprobs === 'number' ? body.logprobs : undefined,
      scheduled: async () => {
        release = await scheduler.admit(abort.signal);
      },
    };
    if (body.stream !== true) return common.scheduled().then(() => answerJson(common));
    const streamOptions = (body.stream_options ?? {}) as { include_usage?: boolean; continuous_usage_stats?: boolean };
    const includeUsage = streamOptions.include_usage === true;
    await streamAnswer({
      ...common,
      includeUsage,
      continuousUsage: includeUsage && streamOptions.continuous_usage_stats === true,
    });
  };

  /** An embeddings, rerank or score request: recorded, checked for its model, answered (mock-pooling.ts). */
  const pooling = async (route: MockPoolingRoute, request: IncomingMessage, response: ServerResponse) => {
    let body: Record<string, unknown>;
    let requestBehaviour: MockBehaviour;
    try {
      body = JSON.parse(await readBody(request)) as Record<string, unknown>;
      requestBehaviour = behaviourFor(behaviour, request.headers[BEHAVIOUR_HEADER]);
    } catch (error) {
      return sendJson(response, 400, mockError(400, (error as Error).message));
    }
    state.received.push({ path: request.url ?? '', headers: request.headers, body });
    if (state.received.length > recordLimit) state.received.shift();
    if (options.servedModel !== undefined && body.model !== options.servedModel)
      return sendJson(response, 404, mockError(404, `The model \`${String(body.model)}\` does not exist.`));
    state.openRequests += 1;
    response.once('close', () => {
      state.openRequests -= 1;
      if (response.writableFinished) state.completedRequests += 1;
      else state.abortedRequests += 1;
    });
    answerPooling(route, body, requestBehaviour, response, failureMessageOf(requestBehaviour, request.headers, body));
  };

  const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 0 }, (request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const route = `${request.method} ${path}`;
    if (request.method === 'GET') state.gets[path] = (state.gets[path] ?? 0) + 1;
    if (route === 'POST /v1/chat/completions' || route === 'POST /v1/completions') {
      chat(request, response, route === 'POST /v1/completions').catch((error: unknown) => {
        if ((error as Error)?.name === 'AbortError') return;
        if (!response.headersSent) sendJson(response, 500, mockError(500, String(error)));
        else response.destroy();
      });
    } else if (request.method === 'POST' && poolingRouteOf(path) !== undefined) {
      pooling(poolingRouteOf(path)!, request, response).catch(() => response.destroy());
    } else if (route === 'POST /tokenize') {
      answerTokenize(request, response, {
        servedModel: options.servedModel,
        received: state.received,
        recordLimit,
      }).catch(() => response.destroy());
    } else if (route === 'GET /v1/models' && options.modelsRoute !== false) {
      sendJson(response, 200, {
        object: 'list',
        data: [
          {
            id: modelName,
            object: 'model',
            created: 1_700_000_000,
            owned_by: 'vllm',
            root: modelName,
            parent: null,
            max_model_len: 32_768,
          },
        ],
      });
    } else if (route === 'GET /api/tags' && options.tagsRoute === true) {
      sendJson(response, 200, { models: [{ name: modelName, model: modelName, size: 0, digest: 'mock' }] });
    } else if (route === 'GET /health' && options.healthRoute !== false) {
      state.healthChecks += 1;
      response.writeHead(behaviour.unhealthy ? 503 : 200).end();
    } else if (route === 'GET /metrics') {
      answerMetrics(response, behaviour, { model: modelName, state, prefixCache, maxRunning: behaviour.maxRunning });
    } else {
      sendJson(response, 404, mockError(404, `No route ${route}`));
    }
  });

  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve((server.address() as AddressInfo).port);
      });
    });
  const port = await listen(options.port ?? 0);
  const refuseConnections = () =>
    new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
      server.closeAllConnections();
    });

  return {
    url: `http://${host}:${port}/v1`,
    port,
    state,
    prefixCache,
    behaviour: () => behaviour,
    setBehaviour: (changes) => (behaviour = { ...behaviour, ...changes }),
    resetBehaviour: () => (behaviour = initial),
    refuseConnections,
    acceptConnections: async () => {
      if (!server.listening) await listen(port);
    },
    close: refuseConnections,
  };
}

/** Whether the request's last user message holds the behaviour's `poisonPrompt`. */
function chokesOn(behaviour: MockBehaviour, body: Record<string, unknown>): boolean {
  if (!behaviour.poisonPrompt) return false;
  const messages = (body.messages ?? []) as Array<{ role?: string; content?: unknown }>;
  const lastUser = [...messages].reverse().find((message) => message.role === 'user');
  return textOf(lastUser?.content).includes(behaviour.poisonPrompt);
}

/** The message of an injected failure, quoting what the behaviour says (see MockBehaviour.failureQuotes). */
function failureMessageOf(
  behaviour: MockBehaviour,
  headers: IncomingHttpHeaders,
  body: Record<string, unknown>,
): string {
  const base =
    behaviour.failure === 'error' ? 'The mock upstream failed mid-stream.' : 'The mock upstream was told to fail.';
  switch (behaviour.failureQuotes) {
    case 'headers':
      return `${base} Request headers: ${JSON.stringify(headers)}`;
    case 'encoded-key': {
      const key = (headers.authorization ?? '').replace(/^Bearer /, '');
      const unicode = [...key]
        .map((character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`)
        .join('');
      const percent = encodeURIComponent(key).replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
      const base64 = (text: string, encoding: 'base64' | 'base64url') => Buffer.from(text).toString(encoding);
      return [
        `${base} Key as JSON: ${JSON.stringify({ key }).replaceAll('/', '\\/')}`,
        `as \\u escapes: "${unicode}"`,
        `base64: ${base64(key, 'base64')}, base64url: ${base64(key, 'base64url')}, Basic: ${base64(`user:${key}`, 'base64')}`,
        `percent-encoded: ?key=${percent}`,
      ].join('; ');
    }
    case 'prompt': {
      const messages = (body.messages ?? []) as Array<{ role?: string; content?: unknown }>;
      const lastUser = [...messages].reverse().find((message) => message.role === 'user');
      return `${base} Prompt: ${textOf(lastUser?.content)}`;
    }
    default:
      return base;
  }
}

/** A `/v1/completions` body as the chat request the mock plans its answer from. */
function completionAsChat(body: Record<string, unknown>): Record<string, unknown> {
  const prompt = typeof body.prompt === 'string' ? body.prompt : '';
  return { ...body, messages: [{ role: 'user', content: prompt }], chat_template_kwargs: { enable_thinking: false } };
}

/** `/v1/embeddings` and the like, and vLLM's unversioned `/rerank`, `/v2/rerank`. */
function poolingRouteOf(path: string): MockPoolingRoute | undefined {
  const route = path.replace(/^\/(v1|v2)\//, '').replace(/^\//, '');
  return (MOCK_POOLING_ROUTES as readonly string[]).includes(route) ? (route as MockPoolingRoute) : undefined;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    request.on('error', reject);
  });
}
