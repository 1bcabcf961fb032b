import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../apps/mock-upstream/mock-upstream.js';
import { LifecycleService } from '../src/lifecycle/lifecycle.service.js';
import { startGateway, type RunningGateway } from './support/gateway.js';
import { failOnSdkWarnings, startSdkStubGateway } from './support/sdk-gateway.js';
import { postSse, type WireFrame } from './support/sse-client.js';

let gateway: RunningGateway;
let openai: OpenAI;

beforeAll(async () => {
  gateway = await startSdkStubGateway();
  openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'test-key', maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.close();
});
failOnSdkWarnings();

const events = (frames: WireFrame[]) => frames.flatMap((frame) => (frame.kind === 'event' ? [frame] : []));

describe('OpenAI Responses with the openai SDK', () => {
  it('responses.create answers with a message item, output_text and usage', async () => {
    const response = await openai.responses.create({
      model: 'stub',
      input: 'Hello responses',
      instructions: 'Be brief.',
    });
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe('Hello responses');
    expect(response.usage).toMatchObject({ input_tokens: 4, output_tokens: 2, total_tokens: 6 });
    expect(response.id).toMatch(/^resp_/);
  });

  it('responses.stream yields reasoning then text and finalResponse() assembles them', async () => {
    const stream = openai.responses.stream({ model: 'thinker', input: [{ role: 'user', content: 'final words' }] });
    let deltas = '';
    stream.on('response.output_text.delta', (event) => (deltas += event.delta));
    const response = await stream.finalResponse();
    expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    expect(response.output[0]).toMatchObject({
      type: 'reasoning',
      content: [{ type: 'reasoning_text', text: 'weigh it first' }],
    });
    expect(response.output_text).toBe('final words');
    expect(deltas).toBe('final words');
    expect(response.usage?.output_tokens_details.reasoning_tokens).toBe(3);
  });

  it('streams a function call, and takes the function output back to a text answer', async () => {
    const tools = [{ type: 'function' as const, name: 'get_weather', parameters: { type: 'object' }, strict: false }];
    const first = await openai.responses
      .stream({ model: 'stub', input: '{"city":"Oslo"}', tools, tool_choice: 'required' })
      .finalResponse();
    const call = first.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', status: 'completed' });
    expect(JSON.parse((call as { arguments: string }).arguments)).toEqual({ city: 'Oslo' });

    const second = await openai.responses.create({
      model: 'stub',
      tools,
      tool_choice: 'required',
      input: [
        { role: 'user', content: '{"city":"Oslo"}' },
        {
          type: 'function_call',
          call_id: (call as { call_id: string }).call_id,
          name: 'get_weather',
          arguments: (call as { arguments: string }).arguments,
        },
        { type: 'function_call_output', call_id: (call as { call_id: string }).call_id, output: 'snow in Oslo' },
      ],
    });
    expect(second.output_text).toBe('snow in Oslo');
  });

  it('ends with response.incomplete when max_output_tokens is reached', async () => {
    const response = await openai.responses.create({ model: 'stub', input: 'a b c d e', max_output_tokens: 2 });
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(response.output_text).toBe('a b');
  });

  it('ends with response.failed when the engine fails after a heartbeat', async () => {
    const exchange = await postSse(`${gateway.url}/v1/responses`, { model: 'flaky', input: 'x y z', stream: true });
    const last = JSON.parse(events(exchange.frames).at(-1)!.data);
    expect(last).toMatchObject({
      type: 'response.failed',
      response: { status: 'failed', error: { code: 'rate_limit_exceeded' } },
    });
    expect(
      events(exchange.frames).some(
        (frame) => frame.event === 'response.in_progress' && JSON.parse(frame.data).sequence_number > 1,
      ),
    ).toBe(true);

    // The SDK helper ends on the terminal event: the final response says it failed, and why.
    const failed = await openai.responses.stream({ model: 'flaky', input: 'x y z' }).finalResponse();
    expect(failed).toMatchObject({
      status: 'failed',
      error: { code: 'rate_limit_exceeded', message: expect.stringMatching(/failed after 1 tokens/) },
    });
  });

  it('refuses stored state with a clear 400', async () => {
    const failure = await openai.responses
      .create({ model: 'stub', input: 'x', previous_response_id: 'resp_old' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.BadRequestError);
    expect((failure as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('previous_response_id');
  });
});

describe('POST /v1/responses/input_tokens with the openai SDK', () => {
  const key = 'sk-gantry-count-3e1a';
  let upstream: MockUpstream;
  let counting: RunningGateway;
  let client: OpenAI;
  const tools = [
    {
      type: 'function' as const,
      name: 'get_weather',
      description: 'Weather for a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } } },
      strict: false,
    },
  ];

  beforeAll(async () => {
    upstream = await startMockUpstream();
    counting = await startGateway({
      auth: { apiKeys: [key] },
      models: [
        { name: 'stub', engine: 'stub' },
        { name: 'upstream', engine: 'http', upstreams: [upstream.url] },
      ],
    });
    client = new OpenAI({ baseURL: `${counting.url}/v1`, apiKey: key, maxRetries: 0 });
  });
  afterAll(async () => {
    await counting?.close();
    await upstream?.close();
  });

  it('counts the prompt a create would send, as the engine counts it: the stub, and an upstream through its tokenizer', async () => {
    for (const model of ['stub', 'upstream']) {
      const body = {
        model,
        instructions: 'Be brief.',
        input: [{ role: 'user' as const, content: 'what is the weather in Paris today' }],
        tools,
      };
      const counted = await client.responses.inputTokens.count(body);
      expect(counted).toEqual({ object: 'response.input_tokens', input_tokens: expect.any(Number) });
      const created = await client.responses.create({ ...body, tool_choice: 'none' });
      expect(counted.input_tokens, model).toBe(created.usage!.input_tokens);
    }
    // The upstream's own count: its tokenizer was asked, with the messages and tools a create sends.
    const asked = upstream.state.received.filter((received) => received.path === '/tokenize').at(-1)!;
    expect(asked.body).toMatchObject({
      messages: [{ role: 'system' }, { role: 'user' }],
      tools: [{ type: 'function', function: { name: 'get_weather' } }],
    });
    const bigger = await client.responses.inputTokens.count({
      model: 'upstream',
      input: 'one two three four five six seven eight nine ten',
    });
    const smaller = await client.responses.inputTokens.count({ model: 'upstream', input: 'one two' });
    expect(bigger.input_tokens - smaller.input_tokens).toBe(8);
  });

  it('reads the stored conversation: previous_response_id and item_reference count as a create reads them', async () => {
    const first = await client.responses.create({ model: 'upstream', input: 'my name is Ada and I like tea' });
    const continued = { model: 'upstream', previous_response_id: first.id, input: 'what do I like' };
    const counted = await client.responses.inputTokens.count(continued);
    expect(counted.input_tokens).toBe((await client.responses.create(continued)).usage!.input_tokens);
    expect(counted.input_tokens).toBeGreaterThan(
      (await client.responses.inputTokens.count({ model: 'upstream', input: 'what do I like' })).input_tokens,
    );

    const answer = first.output.find((item) => item.type === 'message')!;
    const referenced = await client.responses.inputTokens.count({
      model: 'upstream',
      input: [
        { type: 'item_reference', id: answer.id },
        { role: 'user', content: 'again' },
      ],
    });
    expect(referenced.input_tokens).toBeGreaterThan(
      (await client.responses.inputTokens.count({ model: 'upstream', input: 'again' })).input_tokens,
    );
    await expect(
      client.responses.inputTokens.count({ model: 'stub', previous_response_id: 'resp_unknown', input: 'x' }),
    ).rejects.toMatchObject({
      status: 400,
      error: { param: 'previous_response_id' },
    });
  });

  it('validates like a create: 400s in OpenAI shape naming the field, 404 for an unknown model, 401 without the key', async () => {
    const refusal = (body: Record<string, unknown>) =>
      client.responses.inputTokens.count(body as never).catch((error: unknown) => error);
    for (const [body, param] of [
      [{ input: 'x' }, 'model'],
      [{ model: 'stub', input: 5 }, 'input'],
      [{ model: 'stub', input: 'x', tool_choice: null }, 'tool_choice'],
      [{ model: 'stub', input: 'x', tools: [{ type: 'function' }] }, 'tools[0].name'],
      [{ model: 'stub', input: 'x', truncation: 'sometimes' }, 'truncation'],
    ] as const) {
      const error = await refusal(body);
      expect(error, JSON.stringify(body)).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).error, JSON.stringify(body)).toMatchObject({
        type: 'invalid_request_error',
        param,
      });
    }
    expect(await refusal({ model: 'nope', input: 'x' })).toBeInstanceOf(OpenAI.NotFoundError);
    const keyless = new OpenAI({ baseURL: `${counting.url}/v1`, apiKey: 'sk-wrong', maxRetries: 0 });
    expect(
      await keyless.responses.inputTokens.count({ model: 'stub', input: 'x' }).catch((error: unknown) => error),
    ).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('is refused with 503 while the gateway drains', async () => {
    counting.app.get(LifecycleService).beginDrain();
    const refused = await client.responses.inputTokens
      .count({ model: 'stub', input: 'x' })
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 503, error: { code: 'shutting_down' } });
  });
});
