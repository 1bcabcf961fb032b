import type { GenerationResult } from '../../streaming/collect-generation.js';
import { newId } from '../ids.js';
import { messageItem, reasoningItem, toolCallIdPrefix, toolCallItem } from './response-items.js';
import { finalStatus, responseObject, type ResponseEnvelope } from './response-object.js';

/** The non-streaming Response: the same items and status a stream would end with. */
export function toResponseBody(result: GenerationResult, envelope: ResponseEnvelope) {
  const output: unknown[] = [];
  if (result.reasoning.length > 0)
    output.push(reasoningItem(newId('rs_'), result.reasoning, 'completed', envelope.reasoning));
  if (result.text.length > 0) output.push(messageItem(newId('msg_'), result.text, 'completed'));
  for (const call of result.toolCalls.filter(Boolean)) {
    const tool = envelope.tools.get(call.name);
    output.push(toolCallItem(tool, newId(toolCallIdPrefix(tool)), call.id, call.name, call.arguments, 'completed'));
  }
  return responseObject(envelope, finalStatus(result.finishReason), output, {
    usage: result.usage,
    finishReason: result.finishReason,
  });
}
