import type { CompletionLogprobs } from '../../engine/engine-event.js';

/**
 * A `text_completion` choice's `logprobs` as the Completions API shapes it (vLLM, OpenAI: four
 * lists, one entry per token), or undefined for null or any other shape, which is not passed on.
 */
export function completionLogprobsOf(value: unknown): CompletionLogprobs | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { tokens, token_logprobs, top_logprobs, text_offset } = value as Record<string, unknown>;
  if (!Array.isArray(tokens) || !Array.isArray(token_logprobs) || !Array.isArray(text_offset)) return undefined;
  if (top_logprobs !== undefined && top_logprobs !== null && !Array.isArray(top_logprobs)) return undefined;
  const length = tokens.length;
  if (token_logprobs.length !== length || text_offset.length !== length) return undefined;
  return {
    tokens: tokens as string[],
    token_logprobs: token_logprobs as Array<number | null>,
    top_logprobs: Array.isArray(top_logprobs)
      ? (top_logprobs as CompletionLogprobs['top_logprobs'])
      : Array.from({ length }, () => null),
    text_offset: text_offset as number[],
  };
}
