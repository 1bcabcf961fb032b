import type { LlamaModel, Token } from 'node-llama-cpp';
import { EngineError } from '../../engine/engine-error.js';
import type { CompletionPrompt } from '../../engine/generation-request.js';
import type { ChatPrompt } from './chat-prompt.js';

/** A raw completion's prompt, ready to evaluate, and the text to echo before the completion (`echo`). */
export interface RawPrompt extends ChatPrompt {
  echo?: string;
}

/**
 * A raw completion's prompt as tokens, no chat template: its text tokenized with special tokens
 * read as such (as llama.cpp's server and vLLM read a completion's prompt: a client's own FIM
 * template works), or its token ids as they are. With a `suffix`, the model's fill-in-the-middle
 * tokens frame it as node-llama-cpp's infill does (prefix, text, suffix, text, middle); a model
 * without them refuses a suffix (400).
 */
export function renderCompletionPrompt(model: LlamaModel, completion: CompletionPrompt, modelName: string): RawPrompt {
  const text = (value: string) => model.tokenize(value, true);
  const prompt = typeof completion.prompt === 'string' ? text(completion.prompt) : (completion.prompt as Token[]);
  checkTokenIds(model, prompt);
  const echo =
    completion.echo === true
      ? typeof completion.prompt === 'string'
        ? completion.prompt
        : model.detokenize(prompt, true)
      : undefined;
  const base = { hiddenStops: [], startsInReasoning: false, offersTools: false, echo };
  if (completion.suffix === undefined) return { ...base, tokens: prompt };
  const { prefix, suffix, middle } = model.tokens.infill;
  if (prefix === null || suffix === null || middle === null)
    throw new EngineError(
      'invalid_request',
      `Model '${modelName}' has no fill-in-the-middle tokens: it cannot complete with a suffix.`,
      { param: 'suffix', code: 'suffix_not_supported' },
    );
  return { ...base, tokens: [prefix, ...prompt, suffix, ...text(completion.suffix), middle] };
}

/** Token ids past the vocabulary would read past the model's embedding table. */
function checkTokenIds(model: LlamaModel, tokens: readonly Token[]): void {
  const ggml = (model.fileInfo.metadata as { tokenizer?: { ggml?: { tokens?: unknown } } }).tokenizer?.ggml;
  const size = Array.isArray(ggml?.tokens) ? ggml.tokens.length : undefined;
  if (tokens.length === 0) throw new EngineError('invalid_request', 'The prompt is empty.', { param: 'prompt' });
  if (size !== undefined && tokens.some((token) => token >= size))
    throw new EngineError('invalid_request', `The prompt holds token ids beyond the vocabulary (${size} tokens).`, {
      param: 'prompt',
    });
}
