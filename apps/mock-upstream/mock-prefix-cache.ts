import { createHash } from 'node:crypto';
import { textOf } from './mock-answer.js';

/** Characters per token of the mock's rendered prompts (the usual estimate for English text). */
export const CHARS_PER_TOKEN = 4;
/** Tokens per cache block, as vLLM's default block size. */
export const BLOCK_TOKENS = 16;
const BLOCK_CHARS = BLOCK_TOKENS * CHARS_PER_TOKEN;
/** Models with a cache of their own, past which the least recently used one is dropped. */
const MAX_MODELS = 64;

interface PromptBody {
  model?: unknown;
  messages?: Array<{ role?: string; content?: unknown; tool_calls?: unknown }>;
  tools?: unknown[];
}

/**
 * The prompt as the mock's "chat template" renders it: the tools, then each message as a role
 * marker and its text. What an engine caches is the token sequence of this text.
 */
export function renderPrompt(body: PromptBody): string {
  const tools = (body.tools ?? []).map((tool) => `<|tool|>${JSON.stringify(tool)}`).join('');
  const messages = (body.messages ?? [])
    .map(
      (message) =>
        `<|${message.role ?? 'user'}|>${textOf(message.content)}${message.tool_calls ? JSON.stringify(message.tool_calls) : ''}<|end|>`,
    )
    .join('');
  return tools + messages;
}

/** The token count of a rendered prompt. */
export function tokensOf(rendered: string): number {
  return Math.ceil(rendered.length / CHARS_PER_TOKEN);
}

/** What the cache holds of one prompt, and how to keep the rest once it has been prefilled. */
export interface PrefixLookup {
  promptTokens: number;
  cachedTokens: number;
  /** Keeps the prompt's blocks (call when its prefill is done). */
  store(): void;
}

/**
 * An engine's automatic prefix cache, as vLLM's: the prompt is cut into blocks of 16 tokens, each
 * named by a hash of itself and of every block before it, so a block is found only after the same
 * prefix. A prompt's cached part is its leading run of known blocks (at most all tokens but one:
 * the last is always computed, for its logits). Blocks are kept per model, least recently used
 * evicted past `capacityTokens`; `queries` and `hits` count prompt tokens (vLLM's
 * `prefix_cache_queries` / `prefix_cache_hits`).
 */
export class MockPrefixCache {
  private readonly models = new Map<string, Map<string, true>>();
  queries = 0;
  hits = 0;

  lookup(body: PromptBody, capacityTokens: number): PrefixLookup {
    const rendered = renderPrompt(body);
    const promptTokens = tokensOf(rendered);
    const blocks = this.blocksOf(typeof body.model === 'string' ? body.model : '');
    const hashes: string[] = [];
    let previous = '';
    for (let start = 0; start + BLOCK_CHARS <= rendered.length; start += BLOCK_CHARS) {
      previous = createHash('sha1')
        .update(previous)
        .update(rendered.slice(start, start + BLOCK_CHARS))
        .digest('base64');
      hashes.push(previous);
    }
    let found = 0;
    while (found < hashes.length && blocks.has(hashes[found])) found += 1;
    const cachedTokens = Math.min(found * BLOCK_TOKENS, Math.max(0, promptTokens - 1));
    this.queries += promptTokens;
    this.hits += cachedTokens;
    const capacityBlocks = Math.floor(capacityTokens / BLOCK_TOKENS);
    return {
      promptTokens,
      cachedTokens,
      store: () => {
        for (const hash of hashes) {
          // Re-inserted at the end: a Map keeps insertion order, so its first key is the least recently used.
          blocks.delete(hash);
          blocks.set(hash, true);
        }
        while (blocks.size > capacityBlocks) blocks.delete(blocks.keys().next().value!);
      },
    };
  }

  clear(): void {
    this.models.clear();
    this.queries = 0;
    this.hits = 0;
  }

  private blocksOf(model: string): Map<string, true> {
    let blocks = this.models.get(model);
    if (blocks) {
      this.models.delete(model);
    } else {
      blocks = new Map();
      if (this.models.size >= MAX_MODELS) this.models.delete(this.models.keys().next().value!);
    }
    this.models.set(model, blocks);
    return blocks;
  }
}

/**
 * The server's prefill compute, one request at a time: an engine's prefill throughput is shared
 * by the requests it prefills, so a replica busy with cache misses delays the requests behind them.
 */
export class PrefillLane {
  private busyUntil = 0;

  /** Reserves `computeMs` after the work already queued; returns the milliseconds until it is done. */
  reserve(computeMs: number, now = performance.now()): number {
    const start = Math.max(now, this.busyUntil);
    this.busyUntil = start + computeMs;
    return this.busyUntil - now;
  }
}

/** A request's prefill on the mock's engine model: what it reports, how long it takes. */
export interface PrefillPlan {
  promptTokens: number;
  /** Absent when the request keeps no prefix cache. */
  cachedTokens?: number;
  /**
   * `prefillMs`, plus `prefillPerTokenMs` for each token not cached, computed on the server's
   * prefill lane after the prefills queued before it.
   */
  prefillMs: number;
  /** Call once the prefill is done: its blocks become cached. */
  prefilled(): void;
}

/** The prefill of `body` under `behaviour`; undefined when neither per-token cost nor cache is set. */
export function planPrefill(
  body: PromptBody,
  behaviour: { prefillMs: number; prefillPerTokenMs: number; prefixCacheTokens: number },
  cache: MockPrefixCache,
  lane: PrefillLane = new PrefillLane(),
): PrefillPlan | undefined {
  if (behaviour.prefillPerTokenMs <= 0 && behaviour.prefixCacheTokens <= 0) return undefined;
  const lookup = behaviour.prefixCacheTokens > 0 ? cache.lookup(body, behaviour.prefixCacheTokens) : undefined;
  const promptTokens = lookup?.promptTokens ?? tokensOf(renderPrompt(body));
  const computed = promptTokens - (lookup?.cachedTokens ?? 0);
  return {
    promptTokens,
    cachedTokens: lookup?.cachedTokens,
    prefillMs:
      behaviour.prefillMs +
      (behaviour.prefillPerTokenMs > 0 ? lane.reserve(behaviour.prefillPerTokenMs * computed) : 0),
    prefilled: () => lookup?.store(),
  };
}
