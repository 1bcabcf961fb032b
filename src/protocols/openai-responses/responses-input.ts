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
export type ResponsesFunctionCallItem = { type: 'function_call'; call_id: string; name: string; arguments: string; id?: string };
export type ResponsesFunctionCallOutputItem = {
  type: 'function_call_output';
  call_id: string;
  output: string | Array<{ type: 'input_text' | 'output_text'; text: string }>;
};
export type ResponsesReasoningItem = {
  type: 'reasoning';
  summary?: Array<{ type: 'summary_text'; text: string }>;
  content?: Array<{ type: 'reasoning_text'; text: string }>;
};

export type ResponsesInputItem = ResponsesMessageItem | ResponsesFunctionCallItem | ResponsesFunctionCallOutputItem | ResponsesReasoningItem;

const isString = (value: unknown): value is string => typeof value === 'string';
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isTextList = (value: unknown, types: readonly string[]) =>
  Array.isArray(value) && value.every((part) => isObject(part) && types.includes(part.type as string) && isString(part.text));

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
      const allowed = PART_TYPES[item.role as string];
      if (!allowed) return 'role must be one of user, assistant, system, developer';
      if (isString(item.content)) return undefined;
      if (!Array.isArray(item.content) || !item.content.every((part) => isValidPart(part, allowed))) {
        return `content must be a string or a list of parts (${allowed.join(', ')})`;
      }
      return undefined;
    }
    case 'function_call':
      return isString(item.call_id) && isString(item.name) && isString(item.arguments)
        ? undefined
        : 'a function_call needs string call_id, name and arguments';
    case 'function_call_output':
      return isString(item.call_id) && (isString(item.output) || isTextList(item.output, ['input_text', 'output_text']))
        ? undefined
        : 'a function_call_output needs a string call_id and an output (a string or text parts)';
    case 'reasoning':
      return (item.summary === undefined || isTextList(item.summary, ['summary_text'])) &&
        (item.content === undefined || isTextList(item.content, ['reasoning_text']))
        ? undefined
        : 'a reasoning item needs summary and content as lists of {type, text} parts';
    default:
      return `item type '${String(item.type)}' is not supported (message, function_call, function_call_output, reasoning)`;
  }
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
