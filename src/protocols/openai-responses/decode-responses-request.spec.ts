import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.js';
import { decodeResponsesRequest } from './decode-responses-request.js';
import { ReasoningCipher } from './reasoning-cipher.js';
import type { ResponsesRequestDto } from './responses-request.dto.js';

const cipher = ReasoningCipher.fromSecret('the secret of this spec, long enough');
const decode = (body: Record<string, unknown>) =>
  decodeResponsesRequest({ model: 'stub', input: 'hi', ...body } as ResponsesRequestDto, cipher);

/** The GatewayError a body is refused with. */
function refusal(body: Record<string, unknown>): GatewayError {
  try {
    decode(body);
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }
  throw new Error('the body was accepted');
}

const readFile = { type: 'function', name: 'read_file', description: 'Reads a file.', parameters: { type: 'object' } };
const namespace = {
  type: 'namespace',
  name: 'mcp__files__',
  description: 'The files server.',
  tools: [readFile, { type: 'function', name: '_list' }],
};
const applyPatch = {
  type: 'custom',
  name: 'apply_patch',
  description: 'Edits files.',
  format: { type: 'grammar', syntax: 'lark', definition: 'start: "x"' },
};

describe('decodeResponsesRequest tools', () => {
  it('offers namespaced functions under their flat name and custom tools as a function of one string; hosted tools are left out', () => {
    const request = decode({
      tools: [
        { type: 'web_search', external_web_access: false },
        namespace,
        applyPatch,
        { type: 'image_generation' },
        { type: 'function', name: 'exec' },
      ],
    });
    expect(request.tools.map((tool) => tool.name)).toEqual([
      'mcp__files__read_file',
      'mcp__files__list',
      'apply_patch',
      'exec',
    ]);
    expect(request.tools[0]).toEqual({
      name: 'mcp__files__read_file',
      description: 'Reads a file.',
      parameters: { type: 'object' },
      strict: undefined,
    });
    // A namespaced function without a description of its own gets the namespace's.
    expect(request.tools[1].description).toBe('The files server.');
    expect(request.tools[2].parameters).toEqual({
      type: 'object',
      properties: { input: expect.objectContaining({ type: 'string' }) },
      required: ['input'],
      additionalProperties: false,
    });
    expect(request.tools[2].description).toContain('Edits files.');
    expect(request.tools[2].description).toContain('lark grammar:\nstart: "x"');
    expect(request.toolChoice).toBe('auto');
  });

  it("offers the tools of additional_tools input items (as Codex sends all of its tools) with the request's own", () => {
    const input = [
      { type: 'additional_tools', role: 'developer', tools: [namespace, applyPatch, { type: 'web_search' }] },
      { role: 'user', content: 'hi' },
    ];
    const request = decode({
      input,
      tools: [{ type: 'function', name: 'exec' }],
      tool_choice: { type: 'function', name: 'read_file' },
    });
    expect(request.tools.map((tool) => tool.name)).toEqual([
      'exec',
      'mcp__files__read_file',
      'mcp__files__list',
      'apply_patch',
    ]);
    expect(request.toolChoice).toEqual({ name: 'mcp__files__read_file' });
    expect(request.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
    const fault = refusal({
      input: [{ type: 'additional_tools', role: 'developer', tools: [{ type: 'function', name: 'bad name!' }] }],
    });
    expect(fault.param).toMatch(/^input\[0\]\.tools\[0\]/);
  });

  it('accepts every hosted tool type of the API reference', () => {
    const hosted = [
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
    ];
    const request = decode({ tools: hosted.map((type) => ({ type })) });
    expect(request.tools).toEqual([]);
    expect(request.toolChoice).toBe('none');
  });

  it.each([
    [{ tools: ['x'] }, 'tools[0]'],
    [{ tools: [{ type: 'function' }] }, 'tools[0].name'],
    [{ tools: [{ type: 'function', name: 'bad name!' }] }, 'tools[0].name'],
    [{ tools: [{ type: 'function', name: 'f', parameters: 'x' }] }, 'tools[0].parameters'],
    [{ tools: [{ type: 'web' }] }, 'tools[0].type'],
    [
      { tools: [{ type: 'custom', name: 'c', format: { type: 'grammar', syntax: 'peg', definition: 'x' } }] },
      'tools[0].format',
    ],
    [{ tools: [{ type: 'namespace', name: 'ns', tools: [] }] }, 'tools[0].tools'],
    [{ tools: [{ type: 'namespace', name: 'ns', tools: [{ type: 'web_search' }] }] }, 'tools[0].tools[0]'],
    [
      {
        tools: [
          { type: 'function', name: 'a__b' },
          { type: 'namespace', name: 'a', tools: [{ type: 'function', name: 'b' }] },
        ],
      },
      'tools[1].tools[0].name',
    ],
    // Stored state the stateful layer did not resolve (responses.store: off).
    [{ previous_response_id: 'resp_1' }, 'previous_response_id'],
    [{ background: true }, 'background'],
    [
      {
        input: [
          { role: 'user', content: 'hi' },
          { type: 'item_reference', id: 'msg_1' },
        ],
      },
      'input[1]',
    ],
  ])('refuses %j with a 400 naming %s', (body, param) => {
    const error = refusal(body);
    expect(error.kind).toBe('invalid_request');
    expect(error.param).toBe(param);
  });
});

describe('decodeResponsesRequest tool_choice', () => {
  const tools = [namespace, applyPatch, { type: 'function', name: 'exec' }, { type: 'web_search' }];

  it('finds a namespaced function by its own name, with its namespace, or by its flat name', () => {
    expect(decode({ tools, tool_choice: { type: 'function', name: 'read_file' } }).toolChoice).toEqual({
      name: 'mcp__files__read_file',
    });
    expect(
      decode({ tools, tool_choice: { type: 'function', name: 'read_file', namespace: 'mcp__files__' } }).toolChoice,
    ).toEqual({ name: 'mcp__files__read_file' });
    expect(decode({ tools, tool_choice: { type: 'function', name: 'mcp__files__read_file' } }).toolChoice).toEqual({
      name: 'mcp__files__read_file',
    });
    expect(decode({ tools, tool_choice: { type: 'custom', name: 'apply_patch' } }).toolChoice).toEqual({
      name: 'apply_patch',
    });
  });

  it.each([
    [{ type: 'web_search' }, /hosted tool 'web_search'/],
    [{ type: 'web_search_preview' }, /hosted tool 'web_search_preview'/],
    [{ type: 'mcp', server_label: 'deepwiki' }, /hosted tool 'mcp' \(server_label 'deepwiki'\)/],
    [{ type: 'allowed_tools', mode: 'auto', tools: [] }, /allowed_tools/],
    [{ type: 'function', name: 'nowhere' }, /'nowhere', which is not among the tools/],
    [{ type: 'custom', name: 'exec' }, /'exec', which is not among the tools/],
    [{ type: 'teleport' }, /teleport/],
  ])('refuses %j with a 400 on tool_choice', (choice, message) => {
    const error = refusal({ tools, tool_choice: choice });
    expect(error.param).toMatch(/^tool_choice/);
    expect(error.message).toMatch(message);
  });

  it('says why "required" cannot be met when only hosted tools were given', () => {
    expect(refusal({ tools: [{ type: 'web_search' }], tool_choice: 'required' }).message).toMatch(
      /hosted tools given \(web_search\)/,
    );
  });
});

describe('decodeResponsesRequest input', () => {
  it('gives sealed reasoning back to the engine as the assistant turn it preceded', () => {
    const request = decode({
      tools: [namespace],
      input: [
        { role: 'user', content: 'read it' },
        {
          type: 'reasoning',
          summary: [{ type: 'summary_text', text: 'a summary' }],
          encrypted_content: cipher.seal('the whole reasoning'),
        },
        {
          type: 'function_call',
          call_id: 'c1',
          name: 'read_file',
          namespace: 'mcp__files__',
          arguments: '{"path":"a"}',
        },
        {
          type: 'function_call_output',
          call_id: 'c1',
          output: [
            { type: 'input_text', text: 'file text' },
            { type: 'input_image', image_url: 'data:,' },
          ],
        },
      ],
    });
    expect(request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'read it' }] },
      {
        role: 'assistant',
        content: '',
        reasoning: 'the whole reasoning',
        toolCalls: [{ id: 'c1', name: 'mcp__files__read_file', arguments: '{"path":"a"}' }],
      },
      { role: 'tool', toolCallId: 'c1', content: 'file text' },
    ]);
  });

  it('takes a summary when no sealed content or raw text came back', () => {
    const request = decode({
      input: [
        { role: 'user', content: 'q' },
        { type: 'reasoning', summary: [{ type: 'summary_text', text: 'summed up' }] },
        { role: 'assistant', content: 'a' },
      ],
    });
    expect(request.messages[1]).toEqual({ role: 'assistant', content: 'a', reasoning: 'summed up' });
  });

  it('refuses sealed content it cannot open, naming the item', () => {
    const foreign = ReasoningCipher.fromSecret(undefined).seal('elsewhere');
    const error = refusal({
      input: [
        { role: 'user', content: 'q' },
        { role: 'user', content: 'r' },
        { type: 'reasoning', summary: [], encrypted_content: foreign },
      ],
    });
    expect(error).toMatchObject({ kind: 'invalid_request', param: 'input[2].encrypted_content' });
    expect(error.message).not.toContain('elsewhere');
  });

  it('turns a custom tool call and its output into a call of the one-string function and its result', () => {
    const request = decode({
      tools: [applyPatch],
      input: [
        { role: 'user', content: 'patch it' },
        { type: 'custom_tool_call', call_id: 'c2', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch' },
        { type: 'custom_tool_call_output', call_id: 'c2', output: 'Done' },
      ],
    });
    expect(request.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'c2', name: 'apply_patch', arguments: JSON.stringify({ input: '*** Begin Patch\n*** End Patch' }) },
        ],
      },
      { role: 'tool', toolCallId: 'c2', content: 'Done' },
    ]);
  });

  it('ignores what it has no use for: store false, unknown include values, reasoning effort xhigh', () => {
    const request = decode({
      store: false,
      include: ['reasoning.encrypted_content', 'something.new'],
      reasoning: { effort: 'xhigh', summary: 'auto' },
    });
    expect(request.reasoning).toEqual({ enabled: true });
  });
});
