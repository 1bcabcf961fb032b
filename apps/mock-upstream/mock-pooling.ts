import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { MockBehaviour } from './mock-behaviour.js';
import { mockError, sendJson } from './mock-chat-json.js';

/** The pooling routes the mock serves, as vLLM does for an embedding or scoring model. */
export const MOCK_POOLING_ROUTES = ['embeddings', 'rerank', 'score'] as const;
export type MockPoolingRoute = (typeof MOCK_POOLING_ROUTES)[number];

const words = (text: string) => text.split(/\s+/).filter(Boolean);

/**
 * Answers a pooling request after the behaviour's `prefillMs` (an injected status fails it first):
 * embeddings as deterministic unit vectors (8 numbers unless `dimensions`; base64 when asked),
 * rerank and score by how many of the query's words each text holds. Usage counts words.
 */
export function answerPooling(
  route: MockPoolingRoute,
  body: Record<string, unknown>,
  behaviour: MockBehaviour,
  response: ServerResponse,
  failureMessage?: string,
): void {
  if (behaviour.failure === 'status') {
    sendJson(response, behaviour.failureStatus, mockError(behaviour.failureStatus, failureMessage));
    return;
  }
  const timer = setTimeout(() => {
    try {
      sendJson(response, 200, poolingAnswer(route, body));
    } catch (error) {
      sendJson(response, 400, mockError(400, (error as Error).message));
    }
  }, behaviour.prefillMs);
  response.once('close', () => clearTimeout(timer));
}

function poolingAnswer(route: MockPoolingRoute, body: Record<string, unknown>): Record<string, unknown> {
  const model = body.model;
  switch (route) {
    case 'embeddings': {
      const inputs =
        typeof body.input === 'string' || typeof (body.input as unknown[])[0] === 'number'
          ? [body.input]
          : (body.input as unknown[]);
      const dimensions = typeof body.dimensions === 'number' ? body.dimensions : 8;
      let tokens = 0;
      const data = inputs.map((input, index) => {
        const text = typeof input === 'string' ? input : (input as number[]).join(',');
        tokens += typeof input === 'string' ? words(input).length : (input as number[]).length;
        const floats = new Float32Array(vectorOf(text, dimensions));
        const embedding =
          body.encoding_format === 'base64' ? Buffer.from(floats.buffer).toString('base64') : Array.from(floats);
        return { object: 'embedding', index, embedding };
      });
      return { id: 'embd-mock', object: 'list', created: 1_700_000_000, model, data, usage: usageOf(tokens) };
    }
    case 'rerank': {
      const query = String(body.query);
      const documents = body.documents as Array<string | { text?: string }>;
      const texts = documents.map((document) => (typeof document === 'string' ? document : (document.text ?? '')));
      const ranked = texts
        .map((text, index) => ({ index, relevance_score: overlap(query, text), document: { text } }))
        .sort((a, b) => b.relevance_score - a.relevance_score)
        .slice(0, typeof body.top_n === 'number' ? body.top_n : texts.length)
        .map((result) => (body.return_documents === false ? { ...result, document: undefined } : result));
      const tokens = texts.reduce((sum, text) => sum + words(query).length + words(text).length, 0);
      return { id: 'rerank-mock', model, usage: { total_tokens: tokens }, results: ranked };
    }
    case 'score': {
      const first = [body.text_1].flat().map(String);
      const second = [body.text_2].flat().map(String);
      const pairs = second.map((text, index) => [first.length === 1 ? first[0] : first[index], text]);
      const data = pairs.map(([query, text], index) => ({ index, object: 'score', score: overlap(query, text) }));
      const tokens = pairs.reduce((sum, [query, text]) => sum + words(query).length + words(text).length, 0);
      return { id: 'score-mock', object: 'list', created: 1_700_000_000, model, data, usage: usageOf(tokens) };
    }
  }
}

function usageOf(tokens: number) {
  return { prompt_tokens: tokens, total_tokens: tokens, completion_tokens: 0 };
}

/** The share of the query's words that the text holds. */
function overlap(query: string, text: string): number {
  const held = new Set(words(text.toLowerCase()));
  const asked = words(query.toLowerCase());
  return asked.length === 0 ? 0 : asked.filter((word) => held.has(word)).length / asked.length;
}

function vectorOf(text: string, dimensions: number): number[] {
  const values: number[] = [];
  for (let block = 0; values.length < dimensions; block += 1) {
    const digest = createHash('sha256').update(`${block}:${text}`).digest();
    for (let offset = 0; offset < digest.length && values.length < dimensions; offset += 2)
      values.push(digest.readUInt16LE(offset) / 32768 - 1);
  }
  const norm = Math.hypot(...values) || 1;
  return values.map((value) => value / norm);
}
