import {
  reasoningUnwanted,
  type ChatMessage,
  type GenerationRequest,
  type ResponseFormat,
  type ToolChoice,
} from '../../engine/generation-request.js';

/** How this fleet wants its requests: the name it knows the model by, and its usage support. */
export interface UpstreamRequestOptions {
  upstreamModel: string;
  /** vLLM's `stream_options.continuous_usage_stats`: usage on every chunk. */
  continuousUsage: boolean;
  /** Ask for one JSON answer instead of a stream (vLLM refuses `stream_options` then). */
  whole: boolean;
  /** Fields that tell this fleet's model not to reason, added when the client did not ask for reasoning. */
  disableReasoningWith?: Record<string, unknown>;
}

/**
 * A neutral generation to an OpenAI Chat Completions body for a vLLM-style upstream.
 *
 * A streamed request always asks for `include_usage`, because servers disagree on its default
 * (vLLM's has been both true and false, llama.cpp's is false); a whole (non-streaming) answer carries its usage anyway. Fields left unset by the client are omitted, so the upstream's own
 * defaults (generation_config) apply.
 */
export function toUpstreamChatRequest(
  request: GenerationRequest,
  options: UpstreamRequestOptions,
): Record<string, unknown> {
  const { sampling } = request;
  const body: Record<string, unknown> = {
    model: options.upstreamModel,
    messages: request.messages.map(toUpstreamMessage),
    stream: !options.whole,
    stream_options: options.whole
      ? undefined
      : options.continuousUsage
        ? { include_usage: true, continuous_usage_stats: true }
        : { include_usage: true },
    // `max_tokens`, not `max_completion_tokens`: every vLLM-style server reads it (llama.cpp, TGI, Ollama).
    max_tokens: sampling.maxTokens,
    temperature: sampling.temperature,
    top_p: sampling.topP,
    top_k: sampling.topK,
    seed: sampling.seed,
    stop: sampling.stop.length > 0 ? sampling.stop : undefined,
    frequency_penalty: sampling.frequencyPenalty,
    presence_penalty: sampling.presencePenalty,
    response_format: sampling.responseFormat && toUpstreamResponseFormat(sampling.responseFormat),
  };
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters, strict: tool.strict },
    }));
    body.tool_choice = toUpstreamToolChoice(request.toolChoice);
    body.parallel_tool_calls = request.parallelToolCalls;
  }
  // The configuration refuses fields Gantry writes itself, so these add and never replace.
  if (options.disableReasoningWith && reasoningUnwanted(request)) Object.assign(body, options.disableReasoningWith);
  return body;
}

/**
 * The request that continues an answer cut after `partial`: the same body with the partial answer
 * as a final assistant message that the upstream renders open and continues (vLLM and SGLang's
 * `continue_final_message` with `add_generation_prompt: false`; llama.cpp's server continues a
 * final assistant message by itself), asking only for the tokens the answer has left. A client's
 * own trailing assistant message (a prefill the answer went on from) is joined with the partial
 * answer: one message is continued.
 */
export function toUpstreamContinuation(
  body: Record<string, unknown>,
  partial: string,
  maxTokens: number | undefined,
): Record<string, unknown> {
  const messages = body.messages as Array<Record<string, unknown>>;
  const last = messages.at(-1);
  const prefill = last?.role === 'assistant' && typeof last.content === 'string' && !last.tool_calls;
  return {
    ...body,
    messages: prefill
      ? [...messages.slice(0, -1), { ...last, content: `${last.content as string}${partial}` }]
      : [...messages, { role: 'assistant', content: partial }],
    continue_final_message: true,
    add_generation_prompt: false,
    max_tokens: maxTokens,
  };
}

function toUpstreamMessage(message: ChatMessage): Record<string, unknown> {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user': {
      const onlyText = message.content.every((part) => part.type === 'text');
      if (onlyText)
        return { role: 'user', content: message.content.map((part) => (part as { text: string }).text).join('\n') };
      return {
        role: 'user',
        content: message.content.map((part) =>
          part.type === 'text'
            ? { type: 'text', text: part.text }
            : { type: 'image_url', image_url: { url: part.url } },
        ),
      };
    }
    case 'assistant':
      // Earlier reasoning is not sent back: chat templates drop it, and some servers (DeepSeek) refuse it.
      return {
        role: 'assistant',
        content: message.toolCalls?.length && message.content === '' ? null : message.content,
        tool_calls: message.toolCalls?.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: call.arguments },
        })),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}

function toUpstreamToolChoice(choice: ToolChoice): unknown {
  return typeof choice === 'object' ? { type: 'function', function: { name: choice.name } } : choice;
}

function toUpstreamResponseFormat(format: ResponseFormat): unknown {
  if (format.type !== 'json_schema') return { type: format.type };
  return { type: 'json_schema', json_schema: { name: format.name, schema: format.schema, strict: format.strict } };
}
