import { newId } from '../protocols/ids.js';
import type { ResponsesInputItem, ResponsesMessageItem } from '../protocols/openai-responses/responses-input.js';
import type { StoredItem, StoredResponse } from './response-store.js';

/** The id prefix OpenAI gives each kind of input item. */
const ID_PREFIXES: Record<string, string> = {
  message: 'msg_',
  function_call: 'fc_',
  function_call_output: 'fco_',
  custom_tool_call: 'ctc_',
  custom_tool_call_output: 'ctco_',
  reasoning: 'rs_',
  additional_tools: 'at_',
};

/**
 * A request's own input as it is kept and listed (`input_items`): each item with a new id (an id
 * a client sent, or that of an item it referenced, would take that id over in the store), a
 * message's text as `input_text` / `output_text` parts.
 */
export function storedInputItems(
  input: string | readonly ResponsesInputItem[],
  makeId: (prefix: string) => string = newId,
): StoredItem[] {
  const items: readonly ResponsesInputItem[] =
    typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : input;
  return items.map((item) => {
    const type = item.type ?? 'message';
    const id = makeId(ID_PREFIXES[type] ?? 'item_');
    if (type !== 'message') return { ...item, id } as StoredItem;
    const message = item as ResponsesMessageItem;
    const partType = message.role === 'assistant' ? 'output_text' : 'input_text';
    const content = typeof message.content === 'string' ? [{ type: partType, text: message.content }] : message.content;
    return { id, type: 'message', role: message.role, content, status: 'completed' };
  });
}

/**
 * The conversation a chain of stored responses holds, oldest first: each one's input items, then
 * its output items. `chain` runs from the newest response back to the first.
 */
export function conversationOf(chain: readonly StoredResponse[]): ResponsesInputItem[] {
  const items: ResponsesInputItem[] = [];
  for (let index = chain.length - 1; index >= 0; index -= 1) {
    const { inputItems, response } = chain[index]!;
    for (const item of inputItems) items.push(asInput(item));
    for (const item of response.output) items.push(asInput(item as StoredItem));
  }
  return items;
}

/**
 * A stored item sent back as input. Reasoning whose text was kept goes back as that text, not
 * its sealed copy: the key that sealed it may be another replica's (or gone with a restart).
 */
export function asInput(item: StoredItem): ResponsesInputItem {
  if (
    item.type === 'reasoning' &&
    Array.isArray(item.content) &&
    item.content.length > 0 &&
    'encrypted_content' in item
  ) {
    const { encrypted_content: _sealed, ...open } = item;
    return open as unknown as ResponsesInputItem;
  }
  return item as unknown as ResponsesInputItem;
}

/** The distinct ids the input's `item_reference`s name, in order. */
export function referencedIds(input: string | readonly ResponsesInputItem[]): string[] {
  if (typeof input === 'string') return [];
  return [...new Set(input.flatMap((item) => (item.type === 'item_reference' ? [item.id] : [])))];
}
