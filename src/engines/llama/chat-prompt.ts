import {
  LlamaText,
  SpecialToken,
  SpecialTokensText,
  type ChatWrapper,
  type Token,
  type Tokenizer,
} from 'node-llama-cpp';
import { reasoningUnwanted, type GenerationRequest } from '../../engine/generation-request.js';
import { toChatFunctions, toChatHistory } from './chat-history.js';

/** A request rendered through the model's chat template, ready to evaluate. */
export interface ChatPrompt {
  tokens: Token[];
  /** The template's end-of-turn texts; end-of-generation tokens (EOS, EOT) stop decoding on their own. */
  hiddenStops: string[];
  /** The generation prompt opened a reasoning block (`...<think>\n`). */
  startsInReasoning: boolean;
  /** Tools were described in the prompt, so `<tool_call>` output is parsed into calls. */
  offersTools: boolean;
}

const OPEN_THOUGHT = /<think>\s*$/;

/**
 * Renders the conversation with the chat wrapper node-llama-cpp resolved for the model (for a GGUF
 * with `tokenizer.chat_template`: the template itself, or a built-in wrapper proven equivalent to
 * it). Tools are passed to the wrapper, which renders them the way the template does (Jinja
 * templates receive them as `tools`). Control tokens written by the template are tokenized as
 * such; message text is tokenized as plain text, so a user cannot forge them.
 *
 * With `disableReasoning` (the model's `disableReasoning`) and a request that did not ask for
 * reasoning, the answer starts after an empty, closed thought: an open one is closed.
 */
export function renderChatPrompt(
  wrapper: ChatWrapper,
  tokenizer: Tokenizer,
  request: GenerationRequest,
  disableReasoning = false,
): ChatPrompt {
  const functions = toChatFunctions(request);
  const state = wrapper.generateContextState({
    chatHistory: toChatHistory(request),
    availableFunctions: functions,
    documentFunctionParams: true,
  });
  let contextText = state.contextText;
  if (disableReasoning && reasoningUnwanted(request)) {
    const closing = OPEN_THOUGHT.test(contextText.toString()) ? '\n</think>\n\n' : '<think>\n\n</think>\n\n';
    contextText = LlamaText([contextText, new SpecialTokensText(closing)]);
  }
  return {
    tokens: contextText.tokenize(tokenizer),
    hiddenStops: state.stopGenerationTriggers.flatMap((trigger) => textTrigger(trigger)),
    startsInReasoning: OPEN_THOUGHT.test(contextText.toString()),
    offersTools: functions !== undefined && Object.keys(functions).length > 0,
  };
}

/** A trigger made only of text (plain or control-token text) as one string; none for EOS-like tokens. */
function textTrigger(trigger: LlamaText): string[] {
  if (trigger.values.some((value) => value instanceof SpecialToken)) return [];
  const text = trigger.toString();
  return text.length > 0 ? [text] : [];
}
