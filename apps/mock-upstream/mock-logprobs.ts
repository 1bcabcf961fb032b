/**
 * vLLM's Completions `logprobs` for one step's text: the token, a made-up log probability that
 * falls with the step's place (so a test can tell steps apart), the top `top` (the token alone;
 * null for 0) and the text offset. Undefined when the request did not ask (`logprobs` unset).
 */
export function mockLogprobs(text: string, position: number, offset: number, top: number | undefined) {
  if (top === undefined) return undefined;
  const logprob = -(position + 1) / 10;
  return {
    tokens: [text],
    token_logprobs: [logprob],
    top_logprobs: [top > 0 ? { [text]: logprob } : null],
    text_offset: [offset],
  };
}
