import type { GenerationRequest } from '../../engine/generation-request.js';
import { estimatePromptTokens } from '../../engine/token-estimate.js';
import { toUpstreamChatRequest } from './upstream-chat-request.js';

/** Where to ask for a count: one replica of the model, under the name it knows the model by. */
export interface TokenCountTarget {
  /** The replica's base URL, `/v1` included; none when no replica is available. */
  baseUrl: string | undefined;
  upstreamModel: string;
  /** What every upstream request carries (the configured headers, the API key). */
  headers: Record<string, string>;
  /** The whole count's budget: past it, the estimate. */
  timeoutMs?: number;
}

/** The tokenizer endpoints an upstream has: vLLM's, llama.cpp's, or neither. */
type TokenizerKind = 'vllm' | 'llama.cpp' | 'none';

const DEFAULT_TIMEOUT_MS = 250;
/** An upstream without a tokenizer endpoint is asked again after this long (it may be replaced). */
const NONE_RECHECK_MS = 60_000;
const known = new Map<string, { kind: TokenizerKind; until: number }>();

/**
 * A prompt's token count from the upstream's own tokenizer and chat template, asked the way the
 * chat request would send the prompt:
 * - vLLM (and servers that copy it): `POST /tokenize` with `{model, messages, tools}` answers
 *   `{count, max_model_len, tokens}`;
 * - llama.cpp server: its `/tokenize` wants text (`{content}`), and answers a chat body with no
 *   tokens; then `POST /apply-template` renders the messages and `/tokenize` counts the text.
 * Both live at the server's root, beside `/v1`. What an upstream speaks is remembered; an upstream
 * with neither (TGI, Ollama, hosted APIs) is not asked again for a minute.
 *
 * Never fails and never takes longer than `timeoutMs` (250 ms): anything else (no replica, a
 * timeout, an error, an odd answer) gives the estimate that `count_tokens` uses.
 */
export async function countUpstreamPromptTokens(request: GenerationRequest, target: TokenCountTarget): Promise<number> {
  const estimate = () => estimatePromptTokens(request);
  if (target.baseUrl === undefined) return estimate();
  const root = rootOf(target.baseUrl);
  const remembered = known.get(root);
  if (remembered && remembered.until <= Date.now()) known.delete(root);
  const kind = known.get(root)?.kind;
  if (kind === 'none') return estimate();

  const signal = AbortSignal.timeout(target.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const post = (path: string, body: unknown) =>
    fetch(root + path, {
      method: 'POST',
      headers: { ...target.headers, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      signal,
    });
  const chat = toUpstreamChatRequest(request, {
    upstreamModel: target.upstreamModel,
    continuousUsage: false,
    whole: true,
  });
  const prompt = { messages: chat.messages, ...(chat.tools ? { tools: chat.tools } : {}) };
  try {
    if (kind !== 'llama.cpp') {
      const answer = await post('/tokenize', { model: target.upstreamModel, ...prompt, add_generation_prompt: true });
      if (isMissing(answer.status)) return remember(root, 'none', estimate());
      if (!answer.ok) return await discard(answer, estimate());
      const body = (await answer.json()) as { count?: unknown; tokens?: unknown };
      if (isCount(body.count)) return remember(root, 'vllm', body.count);
      if (!Array.isArray(body.tokens)) return estimate();
    }
    const rendered = await post('/apply-template', prompt);
    if (isMissing(rendered.status)) return remember(root, 'none', estimate());
    if (!rendered.ok) return await discard(rendered, estimate());
    const text = ((await rendered.json()) as { prompt?: unknown }).prompt;
    if (typeof text !== 'string') return estimate();
    const tokenized = await post('/tokenize', { content: text, add_special: true, parse_special: true });
    if (!tokenized.ok) return await discard(tokenized, estimate());
    const tokens = ((await tokenized.json()) as { tokens?: unknown }).tokens;
    return Array.isArray(tokens) ? remember(root, 'llama.cpp', tokens.length) : estimate();
  } catch {
    return estimate();
  }
}

/** `http://host:8000/v1` to `http://host:8000`, without credentials (which fetch refuses in a URL). */
function rootOf(baseUrl: string): string {
  const url = new URL(baseUrl);
  return url.origin + url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '');
}

function isMissing(status: number): boolean {
  return status === 404 || status === 405 || status === 501;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

function remember(root: string, kind: TokenizerKind, count: number): number {
  known.set(root, { kind, until: kind === 'none' ? Date.now() + NONE_RECHECK_MS : Number.POSITIVE_INFINITY });
  return count;
}

/** Reads an answer that is not used, so its connection can be reused. */
async function discard(answer: Response, count: number): Promise<number> {
  await answer.body?.cancel().catch(() => undefined);
  return count;
}
