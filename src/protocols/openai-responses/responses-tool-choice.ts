import type { ToolChoice } from '../../engine/generation-request.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { checkToolChoice } from '../tool-choice.js';
import { flatToolName, HOSTED_TOOL_TYPES, type ResponsesToolset } from './responses-tools.js';

/** `tool_choice` as the client may send it: a keyword, or an object with a `type`. */
export type ResponsesToolChoice = 'none' | 'auto' | 'required' | ({ type: string } & Record<string, unknown>);

/**
 * A Responses `tool_choice` against the tools the engine is offered. A named function or custom
 * tool may be given by its own name (with `namespace`, or alone when no other tool shares it) or
 * by its flat name; forcing a hosted tool is refused, since no engine here can run one.
 */
export function decodeResponsesToolChoice(
  choice: ResponsesToolChoice | undefined,
  toolset: ResponsesToolset,
): ToolChoice {
  const names = toolset.definitions.map((definition) => definition.name);
  if (choice === undefined || typeof choice === 'string') {
    if (choice === 'required' && names.length === 0 && toolset.hosted.length > 0) {
      throw invalid(
        `tool_choice "required" needs a function or custom tool; the hosted tools given (${toolset.hosted.join(', ')}) do not run on this gateway`,
      );
    }
    return checkToolChoice(choice, names, 'tool_choice');
  }
  if (choice.type === 'function' || choice.type === 'custom') {
    if (typeof choice.name !== 'string') throw invalid(`tool_choice.name must be a string`, 'tool_choice.name');
    const name = resolveName(choice.type, choice.name, choice.namespace, toolset);
    const found = toolset.byFlatName.get(name);
    if (found !== undefined && found.kind !== choice.type) {
      throw invalid(
        `tool_choice names '${choice.name}', which is not among the tools as a ${choice.type} tool (it is a ${found.kind} tool)`,
      );
    }
    return checkToolChoice({ name }, names, 'tool_choice');
  }
  if (HOSTED_TOOL_TYPES.has(choice.type)) {
    const label = typeof choice.server_label === 'string' ? ` (server_label '${choice.server_label}')` : '';
    throw invalid(
      `tool_choice forces the hosted tool '${choice.type}'${label}, which this gateway cannot run: hosted tools are accepted in tools but left out of the prompt. Force a function or custom tool, or use "auto"`,
      'tool_choice',
      'unsupported_value',
    );
  }
  if (choice.type === 'allowed_tools') {
    throw invalid(
      'tool_choice {"type": "allowed_tools"} is not supported: list only the allowed tools in tools instead',
      'tool_choice',
      'unsupported_value',
    );
  }
  throw invalid(
    `tool_choice.type '${choice.type}' is not a Responses tool choice (function, custom, or a keyword: none, auto, required)`,
    'tool_choice.type',
  );
}

function resolveName(kind: 'function' | 'custom', name: string, namespace: unknown, toolset: ResponsesToolset): string {
  if (typeof namespace === 'string') return flatToolName(namespace, name);
  if (toolset.byFlatName.get(name)?.kind === kind) return name;
  const namesakes = [...toolset.byFlatName].filter(([, tool]) => tool.kind === kind && tool.name === name);
  return namesakes.length === 1 ? namesakes[0][0] : name;
}

function invalid(message: string, param = 'tool_choice', code?: string): GatewayError {
  return new GatewayError('invalid_request', message, { param, code });
}
