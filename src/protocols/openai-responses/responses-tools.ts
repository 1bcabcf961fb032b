import type { ToolDefinition } from '../../engine/generation-request.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { FUNCTION_NAME_PATTERN, FUNCTION_NAME_RULE } from '../function-definition.dto.js';

/**
 * Tool types of the Responses API that OpenAI runs itself, or that need items of their own
 * (`web_search_call`, `mcp_call`, `shell_call`, `tool_search_call`...). No Gantry engine can run
 * them: they are accepted and left out of the prompt, and a tool_choice forcing one is refused.
 */
export const HOSTED_TOOL_TYPES: ReadonlySet<string> = new Set([
  'web_search',
  'web_search_2025_08_26',
  'web_search_preview',
  'web_search_preview_2025_03_11',
  'file_search',
  'code_interpreter',
  'image_generation',
  'computer',
  'computer_use',
  'computer_use_preview',
  'mcp',
  'local_shell',
  'shell',
  'apply_patch',
  'tool_search',
  'programmatic_tool_calling',
]);

/** A tool the model may call, as the client named it. */
export interface ClientTool {
  /** `custom`: free-form text input, called back as a `custom_tool_call`. */
  kind: 'function' | 'custom';
  name: string;
  namespace?: string;
}

export interface ResponsesToolset {
  /** What the engine offers the model: every function and custom tool, namespaced ones under their flat name. */
  definitions: ToolDefinition[];
  /** The client's tool behind each flat name. */
  byFlatName: ReadonlyMap<string, ClientTool>;
  /** The hosted tool types that were given (and left out). */
  hosted: string[];
}

/** What a custom tool takes, offered to the model as a function: one string. */
const CUSTOM_TOOL_PARAMETERS = Object.freeze({
  type: 'object',
  properties: { input: { type: 'string', description: 'The free-form input of the tool.' } },
  required: ['input'],
  additionalProperties: false,
});

/**
 * The one name a namespaced tool goes by before the model, as Codex flattens them where a
 * boundary cannot keep the split (`mcp__files__` + `read_file` = `mcp__files__read_file`):
 * the namespace without trailing underscores, `__`, the name without leading ones.
 */
export function flatToolName(namespace: string | undefined, name: string): string {
  if (namespace === undefined) return name;
  return `${namespace.replace(/_+$/, '')}__${name.replace(/^_+/, '')}`;
}

/** Tools and where a request gave them: `tools`, or an `additional_tools` input item's `input[3].tools`. */
export interface ToolList {
  path: string;
  tools: readonly unknown[];
}

/**
 * A Responses `tools` list read and checked: function and custom tools (namespaced ones
 * flattened) for the engine, hosted tools set aside. A fault is a 400 whose `param` names it.
 */
export function readResponsesTools(
  tools: readonly unknown[] | undefined,
  more: readonly ToolList[] = [],
): ResponsesToolset {
  const definitions: ToolDefinition[] = [];
  const byFlatName = new Map<string, ClientTool>();
  const hosted: string[] = [];
  const add = (tool: Record<string, unknown>, path: string, namespace?: string) => {
    const client: ClientTool = {
      kind: tool.type as ClientTool['kind'],
      name: tool.name as string,
      ...(namespace === undefined ? {} : { namespace }),
    };
    const flat = flatToolName(namespace, client.name);
    if (byFlatName.has(flat)) throw invalid(`${path}.name`, `the tool name '${flat}' is given twice`);
    byFlatName.set(flat, client);
    definitions.push(client.kind === 'custom' ? customToolDefinition(flat, tool) : functionToolDefinition(flat, tool));
  };

  const lists: ToolList[] = [{ path: 'tools', tools: tools ?? [] }, ...more];
  for (const list of lists)
    list.tools.forEach((tool, index) => {
      const path = `${list.path}[${index}]`;
      if (!isObject(tool) || typeof tool.type !== 'string')
        throw invalid(path, `${path} must be a tool object with a string type`);
      if (tool.type === 'function' || tool.type === 'custom') {
        checkCallable(tool, path);
        add(tool, path);
      } else if (tool.type === 'namespace') {
        checkName(tool.name, `${path}.name`);
        checkOptionalString(tool.description, `${path}.description`);
        if (!Array.isArray(tool.tools) || tool.tools.length === 0)
          throw invalid(`${path}.tools`, `${path}.tools must be a non-empty list of function or custom tools`);
        tool.tools.forEach((inner: unknown, innerIndex: number) => {
          const innerPath = `${path}.tools[${innerIndex}]`;
          if (!isObject(inner) || (inner.type !== 'function' && inner.type !== 'custom')) {
            throw invalid(innerPath, `${innerPath} must be a function or custom tool`);
          }
          checkCallable(inner, innerPath);
          add({ ...inner, description: inner.description ?? tool.description }, innerPath, tool.name as string);
        });
      } else if (HOSTED_TOOL_TYPES.has(tool.type)) {
        hosted.push(tool.type);
      } else {
        throw invalid(
          `${path}.type`,
          `${path}.type '${tool.type}' is not a Responses tool type (function, custom, namespace, or a hosted tool such as web_search)`,
        );
      }
    });
  return { definitions, byFlatName, hosted };
}

/** The free-form input of a custom tool call, from the arguments the model wrote for it. */
export function customToolInput(argumentsText: string): string {
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    if (typeof parsed === 'string') return parsed;
    if (isObject(parsed) && typeof parsed.input === 'string') return parsed.input;
  } catch {
    // Not JSON: the model wrote the input itself.
  }
  return argumentsText;
}

/** The arguments the model would have written for a custom tool's input (an earlier call, sent back). */
export function customToolArguments(input: string): string {
  return JSON.stringify({ input });
}

function functionToolDefinition(name: string, tool: Record<string, unknown>): ToolDefinition {
  return {
    name,
    description: (tool.description as string | null | undefined) ?? undefined,
    parameters: (tool.parameters as Record<string, unknown> | null | undefined) ?? undefined,
    strict: (tool.strict as boolean | null | undefined) ?? undefined,
  };
}

function customToolDefinition(name: string, tool: Record<string, unknown>): ToolDefinition {
  const format = tool.format as { type: string; syntax?: string; definition?: string } | undefined;
  const lines = [(tool.description as string | undefined) ?? 'A tool that takes free-form text.'];
  if (format?.type === 'grammar')
    lines.push(`The input must follow this ${format.syntax} grammar:\n${format.definition}`);
  return {
    name,
    description: lines.join('\n\n'),
    parameters: structuredClone(CUSTOM_TOOL_PARAMETERS) as Record<string, unknown>,
  };
}

function checkCallable(tool: Record<string, unknown>, path: string): void {
  checkName(tool.name, `${path}.name`);
  checkOptionalString(tool.description, `${path}.description`);
  if (tool.type === 'function') {
    if (tool.parameters != null && !isObject(tool.parameters))
      throw invalid(`${path}.parameters`, `${path}.parameters must be a JSON object`);
    if (tool.strict != null && typeof tool.strict !== 'boolean')
      throw invalid(`${path}.strict`, `${path}.strict must be a boolean`);
    return;
  }
  const format = tool.format;
  if (format === undefined || format === null) return;
  const valid =
    isObject(format) &&
    (format.type === 'text' ||
      (format.type === 'grammar' &&
        (format.syntax === 'lark' || format.syntax === 'regex') &&
        typeof format.definition === 'string'));
  if (!valid) {
    throw invalid(
      `${path}.format`,
      `${path}.format must be {"type": "text"} or {"type": "grammar", "syntax": "lark" | "regex", "definition": ...}`,
    );
  }
}

function checkName(name: unknown, path: string): void {
  if (typeof name !== 'string' || !FUNCTION_NAME_PATTERN.test(name))
    throw invalid(path, `${path}: ${FUNCTION_NAME_RULE}`);
}

function checkOptionalString(value: unknown, path: string): void {
  if (value != null && typeof value !== 'string') throw invalid(path, `${path} must be a string`);
}

function invalid(param: string, message: string): GatewayError {
  return new GatewayError('invalid_request', message, { param });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
