import type { ToolChoice } from '../engine/generation-request.js';
import { GatewayError } from '../errors/gateway-error.js';

/**
 * A tool choice checked against the tools offered, the same way for every API: absent means
 * `auto` with tools and `none` without; `required` and a named tool need tools, and the name must
 * be one of them. `param` names the field at fault in the client's protocol.
 */
export function checkToolChoice(
  choice: 'none' | 'auto' | 'required' | { name: string } | undefined,
  toolNames: readonly string[],
  param: string,
): ToolChoice {
  if (choice === undefined) return toolNames.length > 0 ? 'auto' : 'none';
  if (choice === 'none' || choice === 'auto') return choice;
  if (toolNames.length === 0) {
    throw new GatewayError('invalid_request', `${param} requires a tool, but no tools were given`, { param });
  }
  if (choice === 'required') return choice;
  if (!toolNames.includes(choice.name)) {
    throw new GatewayError('invalid_request', `${param} names '${choice.name}', which is not among the tools`, {
      param,
    });
  }
  return { name: choice.name };
}
