import { ContextLengthError } from '../../engine/context-length-error.js';

/**
 * The refusals of a prompt longer than the model's context, as upstreams word them, with where
 * each puts the prompt's tokens and the context's size. Newest wordings first.
 */
const WORDINGS: Array<{ pattern: RegExp; prompt: number; context: number }> = [
  // vLLM: "... maximum context length is 4096 tokens and your request has 4000 input tokens ..."
  { pattern: /maximum context length is (\d+) tokens and your request has (\d+) input tokens/i, context: 1, prompt: 2 },
  // vLLM: "This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens. ..."
  {
    pattern: /maximum context length is (\d+) tokens\. However, your request has (\d+) input tokens/i,
    context: 1,
    prompt: 2,
  },
  // vLLM: "... maximum context length is 4096 tokens. However, you requested 5120 tokens (4608 in the messages, 512 in the completion)."
  {
    pattern: /maximum context length is (\d+) tokens\. However, you requested \d+ tokens \((\d+) in the messages/i,
    context: 1,
    prompt: 2,
  },
  // vLLM, OpenAI: "... maximum context length is 4096 tokens. However, your messages resulted in 5000 tokens."
  {
    pattern:
      /maximum context length is (\d+) tokens\. However, (?:your messages resulted in|you requested) (\d+) tokens/i,
    context: 1,
    prompt: 2,
  },
  // vLLM: "The decoder prompt (length 5000) is longer than the maximum model length of 4096."
  { pattern: /prompt \(length (\d+)\) is longer than the maximum model length of (\d+)/i, prompt: 1, context: 2 },
  // vLLM: "Input prompt (5000 tokens) is too long and exceeds limit of 4096"
  { pattern: /prompt \((\d+) tokens\) is too long and exceeds limit of (\d+)/i, prompt: 1, context: 2 },
  // SGLang: "The input (5000 tokens) is longer than the model's context length (4096 tokens)."
  {
    pattern: /input \((\d+) tokens\) is longer than the model's context length \((\d+) tokens\)/i,
    prompt: 1,
    context: 2,
  },
  // llama.cpp: "request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it"
  { pattern: /request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)/i, prompt: 1, context: 2 },
];

/**
 * A ContextLengthError when an upstream's error answer (a 400, or an in-band error frame) refuses
 * a prompt for being longer than the model's context: vLLM, SGLang and llama.cpp word it each their
 * own way (llama.cpp also types it `exceed_context_size_error`, with `n_prompt_tokens` and
 * `n_ctx`), OpenAI-compatible servers may code it `context_length_exceeded`. Undefined otherwise.
 * Only the numbers are kept, never the upstream's text.
 */
export function upstreamContextLengthError(status: number, bodyText: string): ContextLengthError | undefined {
  if (status !== 400 && status !== 413 && status !== 422) return undefined;
  let error: Record<string, unknown> = {};
  try {
    const body = JSON.parse(bodyText) as Record<string, unknown>;
    error = typeof body.error === 'object' && body.error !== null ? (body.error as Record<string, unknown>) : body;
  } catch {
    // Not JSON: only the text can tell.
  }
  if (error.type === 'exceed_context_size_error') {
    return new ContextLengthError(integerOr(error.n_prompt_tokens), integerOr(error.n_ctx));
  }
  const message =
    typeof error.message === 'string' ? error.message : typeof error.detail === 'string' ? error.detail : bodyText;
  for (const wording of WORDINGS) {
    const match = wording.pattern.exec(message);
    if (match) return new ContextLengthError(Number(match[wording.prompt]), Number(match[wording.context]));
  }
  return error.code === 'context_length_exceeded' ? new ContextLengthError() : undefined;
}

function integerOr(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
}
