/** Output items of a Response (responses/response_output_item.py), in a given state. */
export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

export function reasoningItem(id: string, text: string | undefined, status: ItemStatus) {
  return { id, type: 'reasoning', summary: [], content: text === undefined ? [] : [reasoningPart(text)], status };
}

export function reasoningPart(text: string) {
  return { type: 'reasoning_text', text };
}

export function messageItem(id: string, text: string | undefined, status: ItemStatus) {
  return { id, type: 'message', role: 'assistant', status, content: text === undefined ? [] : [outputTextPart(text)] };
}

export function outputTextPart(text: string) {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

export function functionCallItem(id: string, callId: string, name: string, argumentsText: string, status: ItemStatus) {
  return { id, type: 'function_call', call_id: callId, name, arguments: argumentsText, status };
}
