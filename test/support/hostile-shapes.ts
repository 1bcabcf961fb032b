/**
 * Hostile shapes in every field: each endpoint's body, with every field the gateway reads set
 * (so the DTOs' every field is walked), and each field in turn, at every depth, replaced by a
 * value of the wrong shape. Whatever a shape does to a field, the answer is never a 5xx; a
 * nested array (where no field takes one) is always a 400 naming the field or what holds it.
 */
type Json = unknown;
type Body = Record<string, Json>;

export interface ShapeCase {
  label: string;
  path: string;
  body: Uint8Array;
  /** The field replaced, as an error names it: `messages[1].tool_calls[0].function`. */
  field: string;
  /** The shape is never valid there: the gateway must refuse it. */
  mustRefuse: boolean;
}

export interface ShapeEndpoint {
  path: string;
  /** A valid body that sets every field the endpoint's DTOs declare. */
  body: () => Body;
  /** Top-level fields left out of `body` (they need stored state or change the answer's kind); shapes are put there too. */
  absent: string[];
  /** Walked only this deep: what lies deeper is another endpoint's same DTO and decoder, walked there. */
  depth?: number;
}

const IMAGE = 'data:image/png;base64,iVBORw0KGgo=';
const RESPONSES_PROMPT = () => ({
  model: 'stub',
  input: [
    { role: 'developer', content: 'be brief' },
    {
      type: 'message',
      role: 'user',
      content: [
        { type: 'input_text', text: 'hi' },
        { type: 'input_image', image_url: IMAGE },
      ],
    },
    {
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'plan' }],
      content: [{ type: 'reasoning_text', text: 'think' }],
    },
    { role: 'assistant', content: [{ type: 'output_text', text: 'calling' }] },
    { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
    { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
    { type: 'custom_tool_call', call_id: 'call_2', name: 'run', input: 'ls' },
    { type: 'custom_tool_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: 'ok' }] },
    { role: 'user', content: 'and now?' },
  ],
  instructions: 'be kind',
  tools: [
    { type: 'function', name: 'get_weather', description: 'Weather', parameters: { type: 'object' }, strict: false },
    {
      type: 'custom',
      name: 'run',
      description: 'runs',
      format: { type: 'grammar', syntax: 'lark', definition: 'start: "x"' },
    },
    {
      type: 'namespace',
      name: 'files',
      description: 'file tools',
      tools: [{ type: 'function', name: 'read', parameters: { type: 'object' } }],
    },
    { type: 'web_search' },
  ],
  tool_choice: { type: 'function', name: 'get_weather' },
  parallel_tool_calls: true,
  text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } },
  reasoning: { effort: 'low', summary: 'auto', generate_summary: 'auto' },
});
const ANTHROPIC_PROMPT = () => ({
  model: 'stub',
  messages: [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'hi' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
        { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'think', signature: 'sig' },
        { type: 'redacted_thinking', data: 'sealed' },
        { type: 'text', text: 'calling' },
        { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'sunny' }], is_error: false },
        { type: 'text', text: 'and now?' },
      ],
    },
    { role: 'system', content: 'a system turn' },
  ],
  system: [{ type: 'text', text: 'be brief' }],
  tools: [
    {
      name: 'get_weather',
      description: 'Weather',
      input_schema: { type: 'object', properties: { city: { type: 'string' } } },
      type: 'custom',
      strict: false,
    },
  ],
  tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
  thinking: { type: 'enabled', budget_tokens: 1024 },
});

export const SHAPE_ENDPOINTS: ShapeEndpoint[] = [
  {
    path: '/v1/chat/completions',
    absent: ['stream'],
    body: () => ({
      model: 'stub',
      messages: [
        { role: 'system', content: 'be brief' },
        {
          role: 'user',
          name: 'ada',
          content: [
            { type: 'text', text: 'hi' },
            { type: 'image_url', image_url: { url: IMAGE } },
          ],
        },
        {
          role: 'assistant',
          content: 'calling',
          reasoning_content: 'think',
          reasoning: 'think',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
        { role: 'user', content: 'and now?' },
      ],
      stream_options: { include_usage: true, continuous_usage_stats: false, include_obfuscation: false },
      timings_per_token: false,
      max_tokens: 16,
      max_completion_tokens: 16,
      temperature: 0.5,
      top_p: 0.9,
      top_k: 40,
      seed: 7,
      frequency_penalty: 0,
      presence_penalty: 0,
      stop: ['END'],
      n: 1,
      logprobs: false,
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object' }, strict: false },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: true,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'answer', description: 'an answer', schema: { type: 'object' }, strict: true },
      },
      reasoning_effort: 'low',
      user: 'u1',
    }),
  },
  {
    path: '/v1/responses',
    absent: ['stream', 'previous_response_id', 'background', 'conversation'],
    body: () => ({
      ...RESPONSES_PROMPT(),
      max_output_tokens: 16,
      temperature: 0.5,
      top_p: 0.9,
      store: false,
      include: ['reasoning.encrypted_content'],
      metadata: { topic: 'weather' },
      user: 'u1',
    }),
  },
  {
    path: '/v1/responses/input_tokens',
    absent: ['previous_response_id', 'conversation'],
    depth: 1,
    body: () => ({ ...RESPONSES_PROMPT(), truncation: 'disabled' }),
  },
  {
    path: '/v1/messages',
    absent: ['stream'],
    body: () => ({
      ...ANTHROPIC_PROMPT(),
      max_tokens: 2048,
      stop_sequences: ['END'],
      temperature: 0.5,
      top_p: 0.9,
      top_k: 40,
      metadata: { user_id: 'u1' },
    }),
  },
  { path: '/v1/messages/count_tokens', absent: [], depth: 1, body: ANTHROPIC_PROMPT },
];

/** Values of the wrong shape almost anywhere; the nested arrays are wrong everywhere. Scalars of the wrong type only at the top (class-validator's own type checks hold below). */
const SHAPES: Json[] = [null, [], {}, [[]], [[{}]]];
const TOP_LEVEL_SHAPES: Json[] = [...SHAPES, 1, 'x'];
const isNestedArray = (shape: Json) => Array.isArray(shape) && Array.isArray(shape[0]);
/** Free-form JSON (schemas, tool inputs): replaced whole, not walked into. */
const FREE_FORM = new Set(['parameters', 'schema', 'input_schema']);

type Segment = string | number;

/** Every (endpoint, field, shape) case, in a fixed order. */
export function hostileShapeCases(): ShapeCase[] {
  const encoder = new TextEncoder();
  const cases: ShapeCase[] = [];
  for (const endpoint of SHAPE_ENDPOINTS) {
    const paths = [...fieldPaths(endpoint.body(), []), ...endpoint.absent.map((field) => [field])].filter(
      (path) => path.length <= (endpoint.depth ?? Infinity),
    );
    for (const path of paths) {
      for (const shape of path.length === 1 ? TOP_LEVEL_SHAPES : SHAPES) {
        const body = endpoint.body();
        setAt(body, path, shape);
        const field = pathText(path);
        cases.push({
          label: `${endpoint.path} ${field}: ${JSON.stringify(shape)}`,
          path: endpoint.path,
          body: encoder.encode(JSON.stringify(body)),
          field,
          mustRefuse: isNestedArray(shape),
        });
      }
    }
  }
  return cases;
}

/** Every key that some walked body sets, at any depth, with the absent ones: what the DTOs' fields are checked against. */
export function walkedFieldNames(): Set<string> {
  const names = new Set<string>();
  for (const endpoint of SHAPE_ENDPOINTS) {
    for (const path of fieldPaths(endpoint.body(), []))
      for (const segment of path) if (typeof segment === 'string') names.add(segment);
    for (const field of endpoint.absent) names.add(field);
  }
  return names;
}

/** Whether an error's field (`param`, or the path an Anthropic message starts with) is the field replaced, holds it, or lies in it. */
export function namesField(named: string, field: string): boolean {
  const within = (inner: string, outer: string) =>
    inner === outer || inner.startsWith(`${outer}.`) || inner.startsWith(`${outer}[`);
  return within(field, named) || within(named, field);
}

function fieldPaths(value: Json, at: Segment[]): Segment[][] {
  const paths: Segment[][] = at.length > 0 ? [at] : [];
  const last = at.at(-1);
  if (typeof last === 'string' && FREE_FORM.has(last)) return paths;
  // A tool_use block's input is the tool's own JSON.
  if (last === 'input' && at.length > 1) return paths;
  if (Array.isArray(value)) value.forEach((item, index) => paths.push(...fieldPaths(item, [...at, index])));
  else if (typeof value === 'object' && value !== null)
    for (const [key, item] of Object.entries(value)) paths.push(...fieldPaths(item, [...at, key]));
  return paths;
}

function setAt(body: Body, path: Segment[], value: Json): void {
  let node: Json = body;
  for (const segment of path.slice(0, -1)) node = (node as Record<string, Json>)[segment as string];
  (node as Record<string, Json>)[path.at(-1) as string] = value;
}

function pathText(path: Segment[]): string {
  return path
    .map((segment, index) => (typeof segment === 'number' ? `[${segment}]` : index === 0 ? segment : `.${segment}`))
    .join('');
}
