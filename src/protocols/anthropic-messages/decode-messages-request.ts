import type {
  ChatMessage,
  ContentPart,
  GenerationRequest,
  ToolCall,
  ToolChoice,
} from '../../engine/generation-request.js';
import { checkToolChoice } from '../tool-choice.js';
import type { AnthropicBlock, AnthropicTextBlock } from './anthropic-content.js';
import type { AnthropicMessageDto, AnthropicPromptDto, MessagesRequestDto } from './messages-request.dto.js';
import { fromAnthropicToolUseId } from './tool-use-id.js';

/** A validated Messages request to the neutral GenerationRequest. */
export function decodeMessagesRequest(body: MessagesRequestDto): GenerationRequest {
  return {
    ...decodePrompt(body),
    sampling: {
      maxTokens: body.max_tokens,
      temperature: body.temperature,
      topP: body.top_p,
      topK: body.top_k,
      stop: body.stop_sequences ?? [],
    },
  };
}

/** The prompt half, shared with `count_tokens`. */
export function decodePrompt(
  body: AnthropicPromptDto,
): Omit<GenerationRequest, 'sampling'> & { sampling: { stop: string[] } } {
  const tools = (body.tools ?? []).map((tool) => ({
    name: tool.name,
    description: tool.description,
    parameters: tool.input_schema,
    strict: tool.strict,
  }));
  const messages: ChatMessage[] = [];
  const system = typeof body.system === 'string' ? body.system : joinText(body.system ?? []);
  if (system.length > 0) messages.push({ role: 'system', content: system });
  for (const message of body.messages) for (const decoded of decodeMessage(message)) messages.push(decoded);
  return {
    model: body.model,
    messages,
    tools,
    toolChoice: decodeToolChoice(
      body,
      tools.map((tool) => tool.name),
    ),
    parallelToolCalls: body.tool_choice?.disable_parallel_tool_use !== true,
    sampling: { stop: [] },
    reasoning: body.thinking
      ? { enabled: body.thinking.type !== 'disabled', budgetTokens: body.thinking.budget_tokens }
      : undefined,
    // The real API sends thinking blocks only when thinking is on; clients read `content[0]` as the answer.
    reasoningOutput: body.thinking?.type === 'enabled' || body.thinking?.type === 'adaptive' ? 'show' : 'hide',
  };
}

/**
 * One Anthropic turn may hold tool results and text: results become tool messages, first. A
 * `system` turn stays a system message at its place. Tool-use ids go back to the engine's own.
 */
function decodeMessage(message: AnthropicMessageDto): ChatMessage[] {
  const blocks: AnthropicBlock[] =
    typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
  if (message.role === 'system') return [{ role: 'system', content: joinText(blocks) }];
  if (message.role === 'assistant') {
    const toolCalls: ToolCall[] = [];
    let reasoning = '';
    for (const block of blocks) {
      if (block.type === 'tool_use')
        toolCalls.push({
          id: fromAnthropicToolUseId(block.id),
          name: block.name,
          arguments: JSON.stringify(block.input),
        });
      if (block.type === 'thinking') reasoning += block.thinking;
    }
    return [
      {
        role: 'assistant',
        content: joinText(blocks),
        reasoning: reasoning.length > 0 ? reasoning : undefined,
        toolCalls: toolCalls.length > 0 ? toolCalls : undefined,
      },
    ];
  }

  const decoded: ChatMessage[] = [];
  const parts: ContentPart[] = [];
  for (const block of blocks) {
    if (block.type === 'tool_result') {
      decoded.push({
        role: 'tool',
        toolCallId: fromAnthropicToolUseId(block.tool_use_id),
        content: typeof block.content === 'string' ? block.content : joinText(block.content ?? []),
        isError: block.is_error,
      });
    } else if (block.type === 'text') {
      parts.push({ type: 'text', text: block.text });
    } else if (block.type === 'image') {
      const source = block.source;
      parts.push({
        type: 'image',
        url: source.type === 'url' ? source.url : `data:${source.media_type};base64,${source.data}`,
      });
    }
  }
  if (parts.length > 0) decoded.push({ role: 'user', content: parts });
  return decoded;
}

function joinText(blocks: readonly AnthropicBlock[] | readonly AnthropicTextBlock[]): string {
  return blocks.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n');
}

function decodeToolChoice(body: AnthropicPromptDto, toolNames: string[]): ToolChoice {
  const choice = body.tool_choice;
  const param = choice?.type === 'tool' ? 'tool_choice.name' : 'tool_choice';
  switch (choice?.type) {
    case undefined:
      return checkToolChoice(undefined, toolNames, param);
    case 'auto':
    case 'none':
      return choice.type;
    case 'any':
      return checkToolChoice('required', toolNames, param);
    case 'tool':
      return checkToolChoice({ name: choice.name! }, toolNames, param);
  }
}
