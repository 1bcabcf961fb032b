/**
 * A Chat Completions body shaped like a coding agent's turn deep into a session: a long system
 * prompt, `tools` tool definitions with JSON schemas, and `turns` rounds of user text, an
 * assistant tool call and the tool's result (file contents). Deterministic. With the defaults
 * (60 turns, 24 tools): 181 messages, about 260 KB.
 */
export interface AgentBodyShape {
  turns: number;
  tools: number;
  /** Lines of file content in each tool result. */
  fileLines: number;
}

export const AGENT_TURN: AgentBodyShape = { turns: 60, tools: 24, fileLines: 40 };

export function agentMessages(shape: AgentBodyShape = AGENT_TURN): Array<Record<string, unknown>> {
  const line = (index: number) =>
    `export function step${index}(input: number): number { return input * ${index} + ${index % 7}; } // line ${index}`;
  const file = (seed: number) =>
    Array.from({ length: shape.fileLines }, (_, offset) => line(seed * 100 + offset)).join('\n');
  const messages: Array<Record<string, unknown>> = [
    { role: 'system', content: 'You are a coding agent working in a repository. '.repeat(200) },
  ];
  for (let turn = 0; turn < shape.turns; turn++) {
    messages.push({ role: 'user', content: `Step ${turn}: look at src/module${turn}.ts and fix what is wrong.` });
    const id = `call_${turn}`;
    const call = {
      name: `tool_${turn % shape.tools}`,
      arguments: JSON.stringify({ path: `src/module${turn}.ts`, limit: 200 }),
    };
    messages.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: call }] });
    messages.push({ role: 'tool', tool_call_id: id, content: file(turn) });
  }
  return messages;
}

export function agentTools(shape: AgentBodyShape = AGENT_TURN): Array<Record<string, unknown>> {
  return Array.from({ length: shape.tools }, (_, index) => ({
    type: 'function',
    function: {
      name: `tool_${index}`,
      description: `Tool number ${index}: reads, edits or searches files in the workspace. `.repeat(3),
      parameters: {
        type: 'object',
        properties: {
          path: { type: 'string', description: 'A path relative to the workspace root.' },
          pattern: { type: 'string', description: 'A regular expression.' },
          limit: { type: 'integer', minimum: 1, maximum: 1000 },
          options: { type: 'object', properties: { recursive: { type: 'boolean' }, hidden: { type: 'boolean' } } },
        },
        required: ['path'],
      },
    },
  }));
}

/** The agent's turn as a request to `model`: the answer capped at `tokens`. */
export function agentBody(model: string, tokens: number, stream: boolean, shape: AgentBodyShape = AGENT_TURN): string {
  return JSON.stringify({
    model,
    messages: agentMessages(shape),
    tools: agentTools(shape),
    max_tokens: tokens,
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
  });
}
