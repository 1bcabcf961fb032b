/** Content blocks of Anthropic Messages requests (message_create_params.py), as validated. */
export type AnthropicTextBlock = { type: 'text'; text: string };
export type AnthropicImageBlock = {
  type: 'image';
  source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
};
export type AnthropicToolUseBlock = { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };
export type AnthropicToolResultBlock = {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | AnthropicTextBlock[];
  is_error?: boolean;
};
export type AnthropicThinkingBlock = { type: 'thinking'; thinking: string; signature?: string };
export type AnthropicRedactedThinkingBlock = { type: 'redacted_thinking'; data: string };

export type AnthropicBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicToolUseBlock
  | AnthropicToolResultBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock;

/**
 * `system` turns are not in Anthropic's published schema, but Claude Code sends them in the middle
 * of `messages` (a system prompt that changes mid-conversation); they hold text only.
 */
const BLOCKS_BY_ROLE: Record<'user' | 'assistant' | 'system', readonly string[]> = {
  user: ['text', 'image', 'tool_result'],
  assistant: ['text', 'tool_use', 'thinking', 'redacted_thinking'],
  system: ['text'],
};

/** Own keys only: a role named `toString` or `__proto__` allows nothing (its own rule refuses it). */
export function allowedBlockTypes(role: string): readonly string[] {
  return Object.hasOwn(BLOCKS_BY_ROLE, role) ? BLOCKS_BY_ROLE[role as keyof typeof BLOCKS_BY_ROLE] : [];
}

const isString = (value: unknown): value is string => typeof value === 'string';
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether `block` is a well-formed block of a type allowed for the message's role. */
export function isValidBlock(block: unknown, role: string): boolean {
  if (!isObject(block) || !allowedBlockTypes(role).includes(block.type as string)) return false;
  switch (block.type) {
    case 'text':
      return isString(block.text);
    case 'image': {
      const source = block.source;
      if (!isObject(source)) return false;
      if (source.type === 'url') return isString(source.url);
      return source.type === 'base64' && isString(source.media_type) && isString(source.data);
    }
    case 'tool_use':
      return isString(block.id) && block.id.length > 0 && isString(block.name) && isObject(block.input);
    case 'tool_result':
      return (
        isString(block.tool_use_id) &&
        (block.content === undefined ||
          isString(block.content) ||
          (Array.isArray(block.content) &&
            block.content.every((part) => isObject(part) && part.type === 'text' && isString(part.text)))) &&
        (block.is_error === undefined || typeof block.is_error === 'boolean')
      );
    case 'thinking':
      return isString(block.thinking) && (block.signature === undefined || isString(block.signature));
    case 'redacted_thinking':
      return isString(block.data);
    default:
      return false;
  }
}
