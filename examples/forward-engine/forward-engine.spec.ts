import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../../apps/mock-upstream/mock-upstream.js';
import { logLinesOf, startCli, writeConfig, type CliProcess } from '../../test/support/cli-process.js';
import { postStream, unpooledAgent, type Frame } from '../../test/support/http-stream.js';
import { PROTOCOLS } from '../../test/support/protocol-streams.js';

// The plugin as an operator lists it: the built module (npm test builds first).
const PLUGIN = join(import.meta.dirname, '..', '..', 'dist', 'examples', 'forward-engine', 'forward-engine.module.js');
const KEY_ENV = 'FORWARD_EXAMPLE_KEY';
const SECRET = 'azure-style-secret';

const configText = (upstream: string, extraModels = '') => `keepalive: { intervalMs: 100 }
plugins: [${JSON.stringify(PLUGIN)}]
models:
  - { name: stub, engine: stub }
  - { name: forwarded, engine: forward, baseUrl: ${JSON.stringify(upstream)}, upstreamModel: mock-model, apiKeyEnv: ${KEY_ENV}, maxConcurrency: 1, maxQueue: 1 }
${extraModels}`;

let mock: MockUpstream;
let cli: CliProcess;
let url: string;
let file: string;

beforeAll(async () => {
  mock = await startMockUpstream({ servedModel: 'mock-model' });
  file = writeConfig(configText(mock.url));
  cli = startCli(['--config', file, '--port', '0'], { [KEY_ENV]: SECRET });
  url = await cli.listening;
}, 60_000);
afterAll(async () => {
  cli?.child.kill('SIGKILL');
  await mock?.close();
});
beforeEach(() => mock.resetBehaviour());

const openai = () => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 });
const anthropic = () => new Anthropic({ baseURL: url, apiKey: 'unused', maxRetries: 0 });
const PROMPT = 'one two three';

describe('the forward engine plugin (engine: forward), loaded through plugins: by the CLI', () => {
  it('serves Chat Completions, Responses and Messages, streamed and not, sending the key in its own header', async () => {
    const chat = await openai().chat.completions.create({
      model: 'forwarded',
      messages: [{ role: 'user', content: PROMPT }],
    });
    expect(chat.choices[0].message.content).toBe(PROMPT);
    expect(chat.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 3 });
    let streamed = '';
    for await (const chunk of await openai().chat.completions.create({
      model: 'forwarded',
      stream: true,
      messages: [{ role: 'user', content: PROMPT }],
    })) {
      streamed += chunk.choices[0]?.delta.content ?? '';
    }
    expect(streamed).toBe(PROMPT);

    expect((await openai().responses.create({ model: 'forwarded', input: PROMPT })).output_text).toBe(PROMPT);
    let responded = '';
    for await (const event of await openai().responses.create({ model: 'forwarded', input: PROMPT, stream: true })) {
      if (event.type === 'response.output_text.delta') responded += event.delta;
    }
    expect(responded).toBe(PROMPT);

    const message = await anthropic().messages.create({
      model: 'forwarded',
      max_tokens: 64,
      messages: [{ role: 'user', content: PROMPT }],
    });
    expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: PROMPT })]);
    let texted = '';
    for await (const event of anthropic().messages.stream({
      model: 'forwarded',
      max_tokens: 64,
      messages: [{ role: 'user', content: PROMPT }],
    })) {
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') texted += event.delta.text;
    }
    expect(texted).toBe(PROMPT);

    expect(mock.state.received).toHaveLength(6);
    for (const { headers, body } of mock.state.received) {
      expect(headers['api-key']).toBe(SECRET);
      expect(headers.authorization).toBeUndefined();
      expect(body).toMatchObject({ model: 'mock-model', stream: true });
    }
  });

  it('keeps each API’s stream alive while the API is silent, and admits one at a time: one waits with keep-alives, one more is refused', async () => {
    mock.setBehaviour({ prefillMs: 600 });
    const before = mock.state.received.length;
    for (const protocol of PROTOCOLS) {
      const outcome = await postStream(url, protocol.path, protocol.body('forwarded', PROMPT), {
        agent: unpooledAgent(),
        timeoutMs: 20_000,
      });
      const firstContent = outcome.frames.findIndex(protocol.isContent);
      expect(outcome.frames.slice(0, firstContent).filter(protocol.isHeartbeat).length).toBeGreaterThanOrEqual(2);
      expect(protocol.endedWell(outcome.frames)).toBe(true);
    }

    const [chat] = PROTOCOLS;
    const running = postStream(url, chat.path, chat.body('forwarded', PROMPT), {
      agent: unpooledAgent(),
      timeoutMs: 20_000,
    });
    await eventually(() => mock.state.openRequests === 1);
    // Accepted (its opening frame left) before the next one asks.
    let accepted!: () => void;
    const acceptedOnce = new Promise<void>((resolve) => (accepted = resolve));
    const queued = postStream(url, chat.path, chat.body('forwarded', PROMPT), {
      agent: unpooledAgent(),
      timeoutMs: 20_000,
      onFrame: () => accepted(),
    });
    await acceptedOnce;
    const refused = await postStream(url, chat.path, chat.body('forwarded', PROMPT), {
      agent: unpooledAgent(),
      timeoutMs: 20_000,
    });
    expect(refused.status).toBe(429);
    const [first, second] = await Promise.all([running, queued]);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(chat.endedWell(second.frames)).toBe(true);
    expect(second.frames.filter(chat.isHeartbeat).length).toBeGreaterThanOrEqual(4);
    // The refused request never reached the API.
    expect(mock.state.received.length - before).toBe(PROTOCOLS.length + 2);
  });

  it('opens each API’s stream once the API answered OK, before its prefill ends (the keep-alive, 2 min away, does not)', async () => {
    mock.setBehaviour({ prefillMs: 60_000 });
    const slowBeats = startCli(
      ['--config', writeConfig(configText(mock.url).replace('intervalMs: 100', 'intervalMs: 120000')), '--port', '0'],
      { [KEY_ENV]: SECRET },
    );
    try {
      const slowBeatsUrl = await slowBeats.listening;
      for (const protocol of PROTOCOLS) {
        // Hangs up at the first frame: the opening one (Responses': created and in_progress at once), while the API is still in its prefill.
        const outcome = await postStream(slowBeatsUrl, protocol.path, protocol.body('forwarded', PROMPT), {
          agent: unpooledAgent(),
          timeoutMs: 15_000,
          onFrame: () => true,
        });
        expect({ status: outcome.status, end: outcome.end }).toEqual({ status: 200, end: 'client' });
        expect(eventOf(outcome.frames[0])).toBe(OPENING_EVENT[protocol.api]);
        expect(outcome.frames.some((frame) => protocol.isContent(frame) || protocol.isHeartbeat(frame))).toBe(false);
        expect(await eventually(() => mock.state.openRequests === 0)).toBe(true);
      }
    } finally {
      slowBeats.child.kill('SIGKILL');
    }
  }, 60_000);

  it('serves a model of the plugin’s kind that a reload (SIGHUP) adds', async () => {
    writeFileSync(
      file,
      configText(
        mock.url,
        `  - { name: forwarded-too, engine: forward, baseUrl: ${JSON.stringify(mock.url)}, upstreamModel: mock-model, apiKeyEnv: ${KEY_ENV} }\n`,
      ),
    );
    cli.child.kill('SIGHUP');
    expect(
      await eventually(() =>
        logLinesOf(cli.output().stdout).some((line) => line.msg.includes('models added forwarded-too')),
      ),
    ).toBe(true);
    const chat = await openai().chat.completions.create({
      model: 'forwarded-too',
      messages: [{ role: 'user', content: 'reloaded' }],
    });
    expect(chat.choices[0].message.content).toBe('reloaded');
  });

  it('refuses to start a model whose key is not in the environment, saying which variable', async () => {
    const refused = startCli(['--config', writeConfig(configText(mock.url)), '--port', '0'], { [KEY_ENV]: '' });
    expect(await refused.exited).toBe(1);
    expect(refused.output().stderr).toContain(
      `The engine of model 'forwarded' could not start: the environment variable ${KEY_ENV} (apiKeyEnv) holds no key.`,
    );
  }, 60_000);
});

/** Each API's opening frame: the chat role chunk (no event name), `message_start`, `response.created`. */
const OPENING_EVENT = { chat: undefined, messages: 'message_start', responses: 'response.created' } as const;

function eventOf(frame: Frame): string | undefined {
  if (frame.kind !== 'event') return `comment ${frame.comment}`;
  if (frame.event === undefined)
    expect(JSON.parse(frame.data).choices[0].delta).toEqual({ role: 'assistant', content: '' });
  return frame.event;
}

async function eventually(condition: () => boolean, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}
