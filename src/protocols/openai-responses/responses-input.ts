/** Input items of a Responses request (response_create_params.py), as validated. */
export type ResponsesContentPart =
  | { type: 'input_text'; text: string }
  | { type: 'output_text'; text: string }
  | { type: 'input_image'; image_url?: string; file_id?: string; detail?: string }
  | { type: 'refusal'; refusal: string };

export type ResponsesMessageItem = {
  type?: 'message';
  role: 'user' | 'assistant' | 'system' | 'developer';
  content: string | ResponsesContentPart[];
};
/** Text parts of a tool's output; images and files are accepted and left out (tool results are text here). */
export type ResponsesToolOutput = string | Array<{ type: string; text?: string }>;
export type ResponsesFunctionCallItem = {
  type: 'function_call';
  call_id: string;
  name: string;
  namespace?: string | null;
  arguments: string;
  id?: string;
};
export type ResponsesFunctionCallOutputItem = {
  type: 'function_call_output';
  call_id: string;
  output: ResponsesToolOutput;
};
export type ResponsesCustomToolCallItem = {
  type: 'custom_tool_call';
  call_id: string;
  name: string;
  namespace?: string | null;
  input: string;
};
export type ResponsesCustomToolCallOutputItem = {
  type: 'custom_tool_call_output';
  call_id: string;
  output: ResponsesToolOutput;
};
export type ResponsesReasoningItem = {
  type: 'reasoning';
  summary?: Array<{ type: 'summary_text'; text: string }> | null;
  content?: Array<{ type: 'reasoning_text' | 'text'; text: string }> | null;
  encrypted_content?: string | null;
};
/** An item of a stored response, by id: the gateway puts the item itself in its place before decoding. */
export type ResponsesItemReference = { type: 'item_reference'; id: string };
/** Tools made available from this point of the conversation (Codex sends all of its tools this way). */
export type ResponsesAdditionalToolsItem = { type: 'additional_tools'; role: string; tools: unknown[] };

export type ResponsesInputItem =
  | ResponsesAdditionalToolsItem
  | ResponsesMessageItem
  | ResponsesFunctionCallItem
  | ResponsesFunctionCallOutputItem
  | ResponsesCustomToolCallItem
  | ResponsesCustomToolCallOutputItem
  | ResponsesReasoningItem
  | ResponsesItemReference;

const isString = (value: unknown): value is string => typeof value === 'string';
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isOptionalString = (value: unknown) => value == null || isString(value);
const isTextList = (value: unknown, types: readonly string[]) =>
  Array.isArray(value) &&
  value.every((part) => isObject(part) && types.includes(part.type as string) && isString(part.text));

const PART_TYPES: Record<string, readonly string[]> = {
  user: ['input_text', 'input_image'],
  system: ['input_text'],
  developer: ['input_text'],
  assistant: ['output_text', 'refusal', 'input_text'],
};

/** Why an input item is not acceptable, or undefined when it is. */
export function inputItemProblem(item: unknown): string | undefined {
  if (!isObject(item)) return 'must be an object';
  switch (item.type ?? 'message') {
    case 'message': {
      // Own keys only: a role named `toString` or `__proto__` is an unknown role, not a TypeError.
      const allowed = Object.hasOwn(PART_TYPES, item.role as string) ? PART_TYPES[item.role as string] : undefined;
      if (!allowed) return 'role must be one of user, assistant, system, developer';
      if (isString(item.content)) return undefined;
      if (!Array.isArray(item.content) || !item.content.every((part) => isValidPart(part, allowed))) {
        return `content must be a string or a list of parts (${allowed.join(', ')})`;
      }
      return undefined;
    }
    case 'function_call':
      return isString(item.call_id) &&
        isString(item.name) &&
        isString(item.arguments) &&
        isOptionalString(item.namespace)
        ? undefined
        : 'a function_call needs string call_id, name and arguments (and namespace, when given, a string)';
    case 'custom_tool_call':
      return isString(item.call_id) && isString(item.name) && isString(item.input) && isOptionalString(item.namespace)
        ? undefined
        : 'a custom_tool_call needs string call_id, name and input (and namespace, when given, a string)';
    case 'function_call_output':
    case 'custom_tool_call_output':
      return isString(item.call_id) && isToolOutput(item.output)
        ? undefined
        : `a ${item.type as string} needs a string call_id and an output (a string, or input_text, input_image and input_file parts)`;
    case 'reasoning':
      // Codex sends `content: null` (and `encrypted_content: null`) for what it does not have.
      return (item.summary == null || isTextList(item.summary, ['summary_text'])) &&
        (item.content == null || isTextList(item.content, ['reasoning_text', 'text'])) &&
        (item.encrypted_content == null || isString(item.encrypted_content))
        ? undefined
        : 'a reasoning item needs summary and content as lists of {type, text} parts, and encrypted_content as a string';
    case 'additional_tools':
      return Array.isArray(item.tools) && isOptionalString(item.role)
        ? undefined
        : 'an additional_tools item needs a list of tools';
    case 'item_reference':
      return isString(item.id) && item.id.length > 0 ? undefined : 'an item_reference needs the id of a stored item';
    default:
      return `item type '${String(item.type)}' is not supported (message, function_call, function_call_output, custom_tool_call, custom_tool_call_output, reasoning, additional_tools, item_reference)`;
  }
}

/** A tool output: a string, or parts; text parts need their text. */
function isToolOutput(value: unknown): boolean {
  if (isString(value)) return true;
  return (
    Array.isArray(value) &&
    value.every(
      (part) =>
        isObject(part) &&
        (((part.type === 'input_text' || part.type === 'output_text') && isString(part.text)) ||
          part.type === 'input_image' ||
          part.type === 'input_file'),
    )
  );
}

function isValidPart(part: unknown, allowed: readonly string[]): boolean {
  if (!isObject(part) || !allowed.includes(part.type as string)) return false;
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return isString(part.text);
    case 'refusal':
      return isString(part.refusal);
    case 'input_image':
      return isString(part.image_url);
    default:
      return false;
  }
}
