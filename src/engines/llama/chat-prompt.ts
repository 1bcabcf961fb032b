import { LlamaText, SpecialToken, type ChatWrapper, type Token, type Tokenizer } from 'node-llama-cpp';
import type { GenerationRequest } from '../../engine/generation-request.js';
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

/**
 * Renders the conversation with the chat wrapper node-llama-cpp resolved for the model (for a GGUF
 * with `tokenizer.chat_template`: the template itself, or a built-in wrapper proven equivalent to
 * it). Tools are passed to the wrapper, which renders them the way the template does (Jinja
 * templates receive them as `tools`). Control tokens written by the template are tokenized as
 * such; message text is tokenized as plain text, so a user cannot forge them.
 */
export function renderChatPrompt(wrapper: ChatWrapper, tokenizer: Tokenizer, request: GenerationRequest): ChatPrompt {
  const functions = toChatFunctions(request);
  const state = wrapper.generateContextState({
    chatHistory: toChatHistory(request),
    availableFunctions: functions,
    documentFunctionParams: true,
  });
  const tokens = state.contextText.tokenize(tokenizer);
  return {
    tokens,
    hiddenStops: state.stopGenerationTriggers.flatMap((trigger) => textTrigger(trigger)),
    startsInReasoning: /<think>\s*$/.test(state.contextText.toString()),
    offersTools: functions !== undefined && Object.keys(functions).length > 0,
  };
}

/** A trigger made only of text (plain or control-token text) as one string; none for EOS-like tokens. */
function textTrigger(trigger: LlamaText): string[] {
  if (trigger.values.some((value) => value instanceof SpecialToken)) return [];
  const text = trigger.toString();
  return text.length > 0 ? [text] : [];
}
