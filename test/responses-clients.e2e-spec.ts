import OpenAI from 'openai';
import type { Response, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from './support/gateway.js';
import { failOnSdkWarnings } from './support/sdk-gateway.js';

// What the Codex CLI sends on its defaults (Responses wire): function tools, a freeform `custom`
// tool with a grammar, hosted tools, an MCP server's tools grouped in a `namespace`, sealed
// reasoning asked for with `store: false`, reasoning summaries, and fields Gantry has no use for.
const REASONING = 'look at the files first';
const KEY = 'a test key, long enough for responses.encryptionKey';
const objectOf = (properties: Record<string, unknown>) => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});
const CODEX_TOOLS = [
  {
    type: 'function',
    name: 'exec_command',
    description: 'Runs a command.',
    strict: false,
    parameters: objectOf({ cmd: { type: 'string' } }),
  },
  {
    type: 'function',
    name: 'write_stdin',
    description: 'Writes to a session.',
    strict: false,
    parameters: objectOf({ session_id: { type: 'number' }, chars: { type: 'string' } }),
  },
  {
    type: 'function',
    name: 'update_plan',
    description: 'Updates the plan.',
    strict: false,
    parameters: objectOf({ plan: { type: 'array', items: { type: 'string' } } }),
  },
  {
    type: 'custom',
    name: 'apply_patch',
    description: 'Edits files with a patch.',
    format: {
      type: 'grammar',
      syntax: 'lark',
      definition: 'start: "*** Begin Patch" LF body "*** End Patch"\nbody: /(.|\\n)*/\n%import common.LF',
    },
  },
  { type: 'web_search', external_web_access: false },
  {
    type: 'namespace',
    name: 'mcp__files__',
    description: 'Tools of the files MCP server.',
    tools: [
      {
        type: 'function',
        name: 'read_file',
        description: 'Reads a file.',
        strict: false,
        parameters: objectOf({ path: { type: 'string' } }),
      },
      {
        type: 'function',
        name: 'list_dir',
        description: 'Lists a folder.',
        strict: false,
        defer_loading: true,
        parameters: objectOf({ path: { type: 'string' } }),
      },
    ],
  },
  {
    type: 'function',
    name: 'view_image',
    description: 'Shows an image.',
    strict: false,
    parameters: objectOf({ path: { type: 'string' } }),
  },
  { type: 'image_generation', output_format: 'png' },
  {
    type: 'tool_search',
    execution: 'client',
    description: 'Finds more tools.',
    parameters: objectOf({ query: { type: 'string' } }),
  },
];

const userSays = (text: string) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });

function codexRequest(input: unknown[], extra: Record<string, unknown> = {}) {
  return {
    model: 'thinker',
    instructions: 'You are a coding agent.',
    input: [
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Sandbox: read-only.' }] },
      ...input,
    ],
    tools: CODEX_TOOLS,
    tool_choice: 'auto',
    parallel_tool_calls: false,
    reasoning: { effort: 'medium', summary: 'auto' },
    store: false,
    stream: true,
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: '7f1c2d1e-session',
    service_tier: 'auto',
    text: { verbosity: 'low' },
    stream_options: { include_obfuscation: false },
    ...extra,
  };
}

type Item = Record<string, any>;

/** Streams a request through the SDK's Responses stream helper: every event, and the response it assembles. */
async function streamed(
  client: OpenAI,
  body: Record<string, unknown>,
): Promise<{ events: ResponseStreamEvent[]; response: Response }> {
  const stream = client.responses.stream(body as never);
  const events: ResponseStreamEvent[] = [];
  stream.on('event', (event) => void events.push(event));
  const response = await stream.finalResponse();
  return { events, response };
}

async function refusal(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const failure = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(failure).toBeInstanceOf(OpenAI.APIError);
  return failure as InstanceType<typeof OpenAI.APIError>;
}

let gateway: RunningGateway;
let openai: OpenAI;

beforeAll(async () => {
  gateway = await startGateway({
    models: [
      { name: 'stub', engine: 'stub' },
      { name: 'thinker', engine: 'stub', reasoning: REASONING },
    ],
    responses: { encryptionKey: KEY },
  });
  openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.close();
});
failOnSdkWarnings();

describe('a Codex-shaped request', () => {
  it('streams to completion: summary events, a reasoning item with its summary and sealed content, the answer', async () => {
    const { events, response } = await streamed(openai, codexRequest([userSays('what is in this repo')]));
    expect(response.status).toBe('completed');
    expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    const reasoning = response.output[0] as Item;
    expect(reasoning.summary).toEqual([{ type: 'summary_text', text: REASONING }]);
    expect(reasoning.content).toEqual([{ type: 'reasoning_text', text: REASONING }]);
    expect(typeof reasoning.encrypted_content).toBe('string');
    expect(reasoning.encrypted_content).not.toContain(REASONING.split(' ')[0]);
    expect(response.output_text).toBe('what is in this repo');

    const types = events.map((event) => event.type);
    const at = (type: string) => types.indexOf(type as ResponseStreamEvent['type']);
    const summaryEvents = [
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
    ];
    expect(summaryEvents.map(at).every((index) => index > at('response.output_item.added'))).toBe(true);
    expect(summaryEvents.map(at)).toEqual(summaryEvents.map(at).sort((a, b) => a - b));
    expect(at('response.reasoning_summary_part.done')).toBeLessThan(types.indexOf('response.output_item.done'));
    const deltas = events.flatMap((event) =>
      event.type === 'response.reasoning_summary_text.delta' ? [event.delta] : [],
    );
    expect(deltas.join('')).toBe(REASONING);
    expect(events.find((event) => event.type === 'response.reasoning_summary_part.added')).toMatchObject({
      item_id: reasoning.id,
      output_index: 0,
      summary_index: 0,
      part: { type: 'summary_text', text: '' },
    });
    expect(events.find((event) => event.type === 'response.reasoning_summary_text.done')).toMatchObject({
      summary_index: 0,
      text: REASONING,
    });
    // The hosted tools were accepted and echoed, not run.
    expect(response.tools.map((tool) => tool.type)).toContain('web_search');
  });

  it('answers the same items without streaming', async () => {
    const response = await openai.responses.create(
      codexRequest([userSays('short answer')], {
        stream: false,
      }) as never as OpenAI.Responses.ResponseCreateParamsNonStreaming,
    );
    const reasoning = response.output[0] as Item;
    expect(reasoning).toMatchObject({
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: REASONING }],
      encrypted_content: expect.any(String),
    });
    expect(response.output_text).toBe('short answer');
  });

  it('calls a namespaced function under its own name and namespace, and takes the sealed reasoning and the output back', async () => {
    const first = await streamed(
      openai,
      codexRequest([userSays('{"path":"README.md"}')], { tool_choice: { type: 'function', name: 'read_file' } }),
    );
    expect(first.response.status).toBe('completed');
    const [reasoning, call] = first.response.output as Item[];
    expect(call).toMatchObject({
      type: 'function_call',
      name: 'read_file',
      namespace: 'mcp__files__',
      status: 'completed',
    });
    expect(JSON.parse(call.arguments)).toEqual({ path: 'README.md' });
    const argumentsDone = first.events.find((event) => event.type === 'response.function_call_arguments.done');
    expect(argumentsDone).toMatchObject({ name: 'read_file' });

    // What the client keeps of the reasoning goes back (here: summary and sealed content, `content: null`), and the call.
    const history = [
      userSays('{"path":"README.md"}'),
      { type: 'reasoning', summary: reasoning.summary, content: null, encrypted_content: reasoning.encrypted_content },
      {
        type: 'function_call',
        name: call.name,
        namespace: call.namespace,
        arguments: call.arguments,
        call_id: call.call_id,
      },
      { type: 'function_call_output', call_id: call.call_id, output: 'README: hello from the repo' },
    ];
    const second = await streamed(openai, codexRequest(history));
    expect(second.response.status).toBe('completed');
    expect(second.response.output_text).toBe('README: hello from the repo');

    // Tampered with: one character in the middle of the blob.
    const blob: string = reasoning.encrypted_content;
    const middle = Math.floor(blob.length / 2);
    const tampered = blob.slice(0, middle) + (blob[middle] === 'A' ? 'B' : 'A') + blob.slice(middle + 1);
    const failure = await refusal(
      openai.responses.create(
        codexRequest(
          history.map((item) => (item.type === 'reasoning' ? { ...item, encrypted_content: tampered } : item)),
          { stream: false },
        ) as never,
      ),
    );
    expect(failure.status).toBe(400);
    expect(failure.type).toBe('invalid_request_error');
    // The developer message comes first, so the reasoning item is input[2].
    expect(failure.param).toBe('input[2].encrypted_content');

    // Another gateway with the same key reads the blob (a restart, a replica); one without a key does not.
    const sameKey = await startGateway({
      models: [{ name: 'thinker', engine: 'stub', reasoning: REASONING }],
      responses: { encryptionKey: KEY },
    });
    const noKey = await startGateway({ models: [{ name: 'thinker', engine: 'stub', reasoning: REASONING }] });
    try {
      const replica = new OpenAI({ baseURL: `${sameKey.url}/v1`, apiKey: 'unused', maxRetries: 0 });
      expect((await streamed(replica, codexRequest(history))).response.output_text).toBe('README: hello from the repo');
      const stranger = new OpenAI({ baseURL: `${noKey.url}/v1`, apiKey: 'unused', maxRetries: 0 });
      expect((await refusal(stranger.responses.create(codexRequest(history, { stream: false }) as never))).param).toBe(
        'input[2].encrypted_content',
      );
    } finally {
      await Promise.all([sameKey.close(), noKey.close()]);
    }
  });

  it('refuses a tool_choice that forces a hosted tool, naming it', async () => {
    const webSearch = await refusal(
      openai.responses.create(
        codexRequest([userSays('news?')], { stream: false, tool_choice: { type: 'web_search' } }) as never,
      ),
    );
    expect(webSearch.status).toBe(400);
    expect(webSearch.param).toBe('tool_choice');
    expect(webSearch.message).toContain('web_search');
    const mcp = await refusal(
      openai.responses.create(
        codexRequest([userSays('wiki?')], {
          stream: false,
          tool_choice: { type: 'mcp', server_label: 'deepwiki' },
        }) as never,
      ),
    );
    expect(mcp.status).toBe(400);
    expect(mcp.message).toContain('mcp');
    expect(mcp.message).toContain('deepwiki');
  });
});

describe('custom tools', () => {
  const applyPatch = CODEX_TOOLS.find((tool) => tool.type === 'custom')!;
  const patch = '*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch';

  it('stream a custom_tool_call with its free-form input, and take custom_tool_call_output back', async () => {
    const { events, response } = await streamed(openai, {
      model: 'stub',
      input: JSON.stringify({ input: patch }),
      tools: [applyPatch],
      tool_choice: { type: 'custom', name: 'apply_patch' },
    });
    const call = response.output[0] as Item;
    expect(call).toMatchObject({ type: 'custom_tool_call', name: 'apply_patch', input: patch, status: 'completed' });
    expect(call.call_id).toEqual(expect.any(String));
    const inputDeltas = events.flatMap((event) =>
      event.type === 'response.custom_tool_call_input.delta' ? [event.delta] : [],
    );
    expect(inputDeltas.join('')).toBe(patch);
    expect(events.find((event) => event.type === 'response.custom_tool_call_input.done')).toMatchObject({
      item_id: call.id,
      input: patch,
    });

    const answer = await openai.responses.create({
      model: 'stub',
      tools: [applyPatch] as never,
      input: [
        { role: 'user', content: JSON.stringify({ input: patch }) },
        { type: 'custom_tool_call', call_id: call.call_id, name: 'apply_patch', input: patch },
        { type: 'custom_tool_call_output', call_id: call.call_id, output: 'Success. Updated hello.txt' },
      ],
    });
    expect(answer.output_text).toBe('Success. Updated hello.txt');
  });

  it('answer a custom_tool_call whole without streaming', async () => {
    const response = await openai.responses.create({
      model: 'stub',
      input: JSON.stringify({ input: patch }),
      tools: [applyPatch] as never,
      tool_choice: 'required',
    });
    expect(response.output[0]).toMatchObject({ type: 'custom_tool_call', name: 'apply_patch', input: patch });
  });
});

describe('without the new options', () => {
  it('streams reasoning as before: no summary events, an empty summary, nothing sealed', async () => {
    const { events, response } = await streamed(openai, { model: 'thinker', input: 'plain' });
    expect(events.some((event) => event.type.startsWith('response.reasoning_summary'))).toBe(false);
    expect(response.output[0]).toEqual(expect.objectContaining({ type: 'reasoning', summary: [] }));
    expect((response.output[0] as Item).encrypted_content).toBeUndefined();
  });

  it('answers an item_reference to nothing stored with a clear 400 naming it', async () => {
    const failure = await refusal(
      openai.responses.create({ model: 'stub', input: [{ type: 'item_reference', id: 'msg_1' }] as never }),
    );
    expect(failure.status).toBe(400);
    expect(failure.message).toContain("Item with id 'msg_1' not found");
  });
});
