/**
 * A deterministic generator of malformed and hostile request bodies for the gateway's four POST
 * endpoints. Every case it makes must be refused (4xx): each mutation breaks something the
 * gateway validates, never only a field it ignores.
 */
export interface HostileCase {
  label: string;
  path: string;
  /** Undefined: no content-type header at all. */
  contentType?: string;
  body: Uint8Array;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Endpoint = {
  path: string;
  base: () => { [key: string]: Json };
  required: string[];
  badValues: Record<string, Json[]>;
};

const USER_HI = () => [{ role: 'user', content: 'hi' }];
const BAD_MODEL: Json[] = [42, ['stub'], { name: 'stub' }, null, true, ''];

const ENDPOINTS: Endpoint[] = [
  {
    path: '/v1/chat/completions',
    base: () => ({ model: 'stub', messages: USER_HI() }),
    required: ['model', 'messages'],
    badValues: {
      model: BAD_MODEL,
      messages: [
        'hi',
        5,
        {},
        [],
        null,
        [1],
        [{}],
        [{ role: 'wizard', content: 'x' }],
        [{ role: 'user' }],
        [{ role: 'user', content: 42 }],
        [{ role: 'tool', content: 'x' }],
        [{ role: 'user', content: [{ type: 'video' }] }],
      ],
      stream: ['yes', 1, {}],
      temperature: [-1, 3, 'hot'],
      top_p: [2, -0.5],
      max_tokens: [0, -5, 1.5, '10'],
      max_completion_tokens: [0, 'many'],
      n: [2, 0],
      tools: ['x', [{ type: 'web' }], [{ type: 'function', function: { name: 'bad name!' } }]],
      tool_choice: ['sometimes', { type: 'function' }, 7],
      stop: [5, [1, 2]],
      stream_options: ['x', { include_usage: 'yes' }],
      logprobs: [true],
      response_format: [{ type: 'xml' }, 'json', { type: 'json_schema' }, { type: 'json_schema', json_schema: null }],
      seed: ['x', 1.5],
    },
  },
  {
    path: '/v1/responses',
    base: () => ({ model: 'stub', input: 'hi' }),
    required: ['model', 'input'],
    badValues: {
      model: BAD_MODEL,
      input: [
        5,
        {},
        null,
        true,
        [{ role: 'user', content: 5 }],
        [{ role: 'wizard', content: 'x' }],
        [
          { type: 'reasoning', content: 'x' },
          { role: 'user', content: 'hi' },
        ],
        [
          { type: 'reasoning', summary: 'x' },
          { role: 'user', content: 'hi' },
        ],
        [
          { type: 'reasoning', summary: [null] },
          { role: 'user', content: 'hi' },
        ],
        [
          { type: 'reasoning', content: [{ type: 'reasoning_text', text: 5 }] },
          { role: 'user', content: 'hi' },
        ],
      ],
      stream: ['yes', 0],
      temperature: [5, 'warm'],
      max_output_tokens: [0, 'x', -3],
      previous_response_id: ['resp_123'],
      background: ['yes', 1],
      tools: ['x', [{ type: 'function' }]],
      text: ['plain', { format: { type: 'xml' } }],
    },
  },
  {
    path: '/v1/messages',
    base: () => ({ model: 'stub', max_tokens: 16, messages: USER_HI() }),
    required: ['model', 'max_tokens', 'messages'],
    badValues: {
      model: BAD_MODEL,
      max_tokens: [0, 'x', -1, 2.5, null],
      messages: [
        'hi',
        [],
        [{ role: 'system', content: 'x' }],
        [{ role: 'user', content: [] }],
        [{ role: 'user', content: [{ type: 'video' }] }],
      ],
      temperature: [1.5, 'x'],
      system: [5, [{ type: 'image' }]],
      stop_sequences: ['x', [1]],
      tools: [[{ name: 5 }], 'x'],
      tool_choice: [{ type: 'magic' }, 'auto'],
      thinking: [{ type: 'maybe' }, 'on'],
      top_k: [-1, 'x'],
      stream: ['true'],
    },
  },
  {
    path: '/v1/messages/count_tokens',
    base: () => ({ model: 'stub', messages: USER_HI() }),
    required: ['model', 'messages'],
    badValues: {
      model: BAD_MODEL,
      messages: ['hi', [], null, [{ role: 'user', content: 7 }]],
      system: [5],
      tools: ['x'],
    },
  },
];

const JSON_TYPE = 'application/json';
// No content-type at all is not on the list: Fastify then reads the body as JSON, as curl users expect.
const WRONG_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'text/html',
  'application/octet-stream',
];
const encoder = new TextEncoder();

/** `count` hostile cases, the same for the same seed. */
export function hostileCases(
  count: number,
  random: () => number,
  limits: { maxTokensModel: string; maxTokens: number; maxMessages: number },
): HostileCase[] {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const int = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
  const json = (
    endpoint: Endpoint,
    label: string,
    value: Json | string,
    contentType: string | undefined = JSON_TYPE,
  ): HostileCase => ({
    label: `${endpoint.path} ${label}`,
    path: endpoint.path,
    contentType,
    body: encoder.encode(typeof value === 'string' ? value : JSON.stringify(value)),
  });
  const deep = (depth: number, leaf: string) => '['.repeat(depth) + leaf + ']'.repeat(depth);

  const families: Array<(endpoint: Endpoint) => HostileCase> = [
    (endpoint) => {
      const field = pick(Object.keys(endpoint.badValues));
      const value = pick(endpoint.badValues[field]);
      return json(endpoint, `wrong ${field}: ${JSON.stringify(value)}`, { ...endpoint.base(), [field]: value });
    },
    (endpoint) => {
      const body = endpoint.base();
      const field = pick(endpoint.required);
      delete body[field];
      return json(endpoint, `missing ${field}`, body);
    },
    (endpoint) => {
      const depth = pick([65, 200, 1_000, 10_000, 50_000]);
      const text = JSON.stringify(endpoint.base());
      const where = pick(['body', 'field', 'content', 'metadata']);
      if (where === 'body') return json(endpoint, `${depth}-deep body`, deep(depth, '1'));
      if (where === 'field')
        return json(endpoint, `${depth}-deep field`, `${text.slice(0, -1)},"extra":${deep(depth, '')}}`);
      if (where === 'metadata')
        return json(
          endpoint,
          `${depth}-deep object`,
          `${text.slice(0, -1)},"metadata":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`,
        );
      return json(
        endpoint,
        `${depth}-deep content`,
        text.replace('"hi"', deep(depth, '"hi"')).replace('"input":"hi"', `"input":${deep(depth, '"hi"')}`),
      );
    },
    (endpoint) => {
      const text = JSON.stringify(endpoint.base());
      const bad = pick([
        [0xff],
        [0xc3, 0x28],
        [0xe2, 0x82],
        [0xf0, 0x28, 0x8c, 0xbc],
        [0xc0, 0xaf],
        [0xed, 0xa0, 0x80],
      ]);
      const at = text.indexOf('hi') + 1;
      const body = new Uint8Array([...encoder.encode(text.slice(0, at)), ...bad, ...encoder.encode(text.slice(at))]);
      return {
        label: `${endpoint.path} invalid UTF-8 ${bad.map((byte) => byte.toString(16)).join(' ')}`,
        path: endpoint.path,
        contentType: JSON_TYPE,
        body,
      };
    },
    (endpoint) => {
      const text = JSON.stringify(endpoint.base());
      const poison = pick([
        '"__proto__":{"polluted":true}',
        '"constructor":{"prototype":{"polluted":true}}',
        '"__proto__":{"toString":"x"}',
      ]);
      const nested = random() < 0.5;
      const body =
        nested && text.includes('{"role"')
          ? text.replace('{"role"', `{${poison},"role"`)
          : `{${poison},${text.slice(1)}`;
      return json(endpoint, `prototype pollution ${nested ? 'nested' : 'top'} ${poison.slice(0, 20)}`, body);
    },
    (endpoint) => {
      const contentType = pick(WRONG_TYPES);
      return json(endpoint, `content-type ${contentType ?? 'none'}`, JSON.stringify(endpoint.base()), contentType);
    },
    (endpoint) => {
      const text = JSON.stringify(endpoint.base());
      const variant = pick(['truncated', 'trailing', 'leading', 'empty', 'single-quoted', 'nan', 'comment']);
      switch (variant) {
        case 'truncated':
          return json(endpoint, 'truncated JSON', text.slice(0, int(0, text.length - 1)));
        case 'trailing':
          return json(endpoint, 'trailing garbage', text + pick(['}', ']', 'x', ',', ' {}', '\u0000']));
        case 'leading':
          return json(endpoint, 'leading garbage', pick(['x', ',', ']', 'null']) + text);
        case 'empty':
          return json(endpoint, 'empty body', '');
        case 'single-quoted':
          return json(endpoint, 'single quotes', text.replaceAll('"', "'"));
        case 'nan':
          return json(endpoint, 'NaN', text.replace(/}$/, ',"temperature":NaN}'));
        default:
          return json(endpoint, 'comment', `/* hi */${text}`);
      }
    },
    (endpoint) =>
      json(endpoint, 'top-level non-object', pick<Json>([[], 5, 'stub', null, true, [endpoint.base()], 1e308])),
    (endpoint) => {
      const size = pick([300_000, 1_200_000]);
      const body = endpoint.base();
      if (size > 1_000_000) {
        return json(endpoint, 'body over the limit', { ...body, padding: 'x'.repeat(size) });
      }
      return json(endpoint, 'huge model name', { ...body, model: 'm'.repeat(size) });
    },
    (endpoint) => {
      const body = endpoint.base();
      const junk: { [key: string]: Json } = {};
      for (let index = int(0, 6); index > 0; index -= 1)
        junk[`k${int(0, 99)}`] = pick<Json>([1, 'x', null, [], {}, true]);
      delete body[pick(endpoint.required)];
      return json(endpoint, 'random object missing a field', { ...junk, ...body });
    },
    (endpoint) => {
      const model = pick(['no-such-model', '../../etc/passwd', '<script>', 'stub ', 'STUB', '\u0000', '🦀']);
      return json(endpoint, `unknown model ${JSON.stringify(model)}`, { ...endpoint.base(), model });
    },
    (endpoint) => {
      if (endpoint.path === '/v1/messages/count_tokens' || random() < 0.5) {
        const messages = Array.from({ length: int(limits.maxMessages + 1, limits.maxMessages * 4) }, (_, index) => ({
          role: index % 2 === 0 ? 'user' : 'assistant',
          content: `m${index}`,
        }));
        if (endpoint.path === '/v1/responses')
          return json(endpoint, 'too many input items', { ...endpoint.base(), input: messages });
        return json(endpoint, 'too many messages', { ...endpoint.base(), messages });
      }
      const field =
        { '/v1/chat/completions': pick(['max_tokens', 'max_completion_tokens']), '/v1/responses': 'max_output_tokens' }[
          endpoint.path
        ] ?? 'max_tokens';
      const asked = int(limits.maxTokens + 1, 1_000_000);
      return json(endpoint, `${field} ${asked} above the ceiling`, {
        ...endpoint.base(),
        model: limits.maxTokensModel,
        [field]: asked,
      });
    },
  ];

  return Array.from({ length: count }, (_, index) => families[index % families.length](pick(ENDPOINTS)));
}
