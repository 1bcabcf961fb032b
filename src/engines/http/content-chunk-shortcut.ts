import type { UpstreamChunk, UpstreamDelta } from './upstream-chunk.js';

/**
 * A content (or reasoning) chunk exactly as vLLM writes it, with or without continuous usage:
 * `{"id":…,"object":"chat.completion.chunk","created":…,"model":…,"choices":[{"index":0,
 * "delta":{"content":"…"},"logprobs":null,"finish_reason":null}],"usage":{…}}`. Only the delta's
 * field and text and the usage counts are captured; the text is a JSON string literal.
 */
const CONTENT_CHUNK =
  /^\{"id":"[^"\\]*","object":"chat\.completion\.chunk","created":\d+,"model":"[^"\\]*","choices":\[\{"index":0,"delta":\{"(content|reasoning_content|reasoning)":("(?:[^"\\\u0000-\u001f]|\\.)*")\},"logprobs":null,"finish_reason":null\}\](?:,"usage":(?:(null)|\{"prompt_tokens":(\d+),"total_tokens":\d+,"completion_tokens":(\d+)\}))?\}$/;

/**
 * The chunk `data` holds, read without JSON.parse when it is the one shape that makes up nearly
 * all of a vLLM stream (`JSON.parse` of every chunk is a large share of the gateway's CPU when it
 * streams from an HTTP upstream: docs/benchmarks.md); `undefined` for anything else, which the caller parses.
 */
export function readContentChunk(data: string): UpstreamChunk | undefined {
  const match = CONTENT_CHUNK.exec(data);
  if (match === null) return undefined;
  // Indexed, not destructured: destructuring walks a match array through its iterator.
  const literal = match[2];
  let text: string;
  if (literal.includes('\\')) {
    try {
      text = JSON.parse(literal) as string;
    } catch {
      return undefined;
    }
  } else {
    text = literal.slice(1, -1);
  }
  const field = match[1];
  const delta: UpstreamDelta =
    field === 'content' ? { content: text } : field === 'reasoning' ? { reasoning: text } : { reasoning_content: text };
  const promptTokens = match[4];
  return {
    choices: [{ index: 0, delta, finish_reason: null }],
    usage:
      promptTokens !== undefined
        ? { prompt_tokens: +promptTokens, completion_tokens: +match[5] }
        : match[3] !== undefined
          ? null
          : undefined,
  };
}
