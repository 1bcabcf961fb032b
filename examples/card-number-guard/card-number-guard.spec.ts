import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, writeConfig, type CliProcess } from '../../test/support/cli-process.js';
import { holdsCardNumber } from './sensitive-text.js';

// The plugin as an operator lists it: the built module (npm test builds first).
const PLUGIN = join(
  import.meta.dirname,
  '..',
  '..',
  'dist',
  'examples',
  'card-number-guard',
  'card-number-guard.module.js',
);
const KEY = 'sk-guarded';
/** A test number of the card networks: it passes the Luhn check. */
const CARD = '4111 1111 1111 1111';
const CARD_REFUSAL = 'The request holds what looks like a payment card number; remove it and send again.';

let cli: CliProcess;
let url: string;

beforeAll(async () => {
  const file = writeConfig(
    `auth: { apiKeys: [${KEY}] }\nplugins: [${JSON.stringify(PLUGIN)}]\nmodels:\n  - { name: stub, engine: stub }\n`,
  );
  cli = startCli(['--config', file, '--port', '0'], { GUARDRAIL_PATTERN: 'project\\s+nightingale' });
  url = await cli.listening;
}, 60_000);
afterAll(() => cli?.child.kill('SIGKILL'));

const openai = (apiKey = KEY) => new OpenAI({ baseURL: `${url}/v1`, apiKey, maxRetries: 0 });
const anthropic = (apiKey = KEY) => new Anthropic({ baseURL: url, apiKey, maxRetries: 0 });

/** Each API's request for `text`, streamed or not, through its official SDK; resolves the answer's text. */
const ASK = {
  chat: async (text: string, stream: boolean, apiKey?: string) => {
    if (!stream)
      return (
        await openai(apiKey).chat.completions.create({ model: 'stub', messages: [{ role: 'user', content: text }] })
      ).choices[0].message.content;
    let answer = '';
    for await (const chunk of await openai(apiKey).chat.completions.create({
      model: 'stub',
      stream: true,
      messages: [{ role: 'user', content: text }],
    })) {
      answer += chunk.choices[0]?.delta.content ?? '';
    }
    return answer;
  },
  responses: async (text: string, stream: boolean, apiKey?: string) => {
    const input = [{ role: 'user' as const, content: [{ type: 'input_text' as const, text }] }];
    if (!stream) return (await openai(apiKey).responses.create({ model: 'stub', input })).output_text;
    let answer = '';
    for await (const event of await openai(apiKey).responses.create({ model: 'stub', input, stream: true })) {
      if (event.type === 'response.output_text.delta') answer += event.delta;
    }
    return answer;
  },
  messages: async (text: string, stream: boolean, apiKey?: string) => {
    const request = {
      model: 'stub',
      max_tokens: 64,
      system: 'Be brief.',
      messages: [{ role: 'user' as const, content: text }],
    };
    if (!stream)
      return (await anthropic(apiKey).messages.create(request)).content
        .map((block) => (block.type === 'text' ? block.text : ''))
        .join('');
    let answer = '';
    for await (const event of anthropic(apiKey).messages.stream(request)) {
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') answer += event.delta.text;
    }
    return answer;
  },
};

/** The SDK error a request failed with: its status, and the body's error type and message in the protocol's shape. */
async function refusalOf(request: Promise<unknown>): Promise<{ status: number; type?: string; message?: string }> {
  try {
    await request;
  } catch (error) {
    if (error instanceof OpenAI.APIError) {
      const body = error.error as { type?: string; message?: string } | undefined;
      return { status: error.status ?? 0, type: body?.type, message: body?.message };
    }
    if (error instanceof Anthropic.APIError) {
      const body = error.error as { type?: string; error?: { type?: string; message?: string } } | undefined;
      expect(body?.type).toBe('error');
      return { status: error.status ?? 0, type: body?.error?.type, message: body?.error?.message };
    }
    throw error;
  }
  throw new Error('the request was served');
}

describe('the card-number guard plugin (an APP_GUARD), loaded through plugins: by the CLI', () => {
  it('checks the API key first: a request without one is a 401, whatever it holds', async () => {
    for (const [api, ask] of Object.entries(ASK)) {
      expect({ api, ...(await refusalOf(ask(`my card is ${CARD}`, false, 'sk-wrong'))) }).toMatchObject({
        api,
        status: 401,
        type: 'authentication_error',
      });
    }
  });

  it('refuses a card number in each API’s own shape with 403, streamed and not', async () => {
    for (const [api, ask] of Object.entries(ASK)) {
      for (const stream of [false, true]) {
        expect({ api, stream, ...(await refusalOf(ask(`please charge ${CARD} for the order`, stream))) }).toEqual({
          api,
          stream,
          status: 403,
          type: 'permission_error',
          message: CARD_REFUSAL,
        });
      }
    }
  });

  it('refuses what matches GUARDRAIL_PATTERN, and serves the rest (digits that are no card number included)', async () => {
    expect(await refusalOf(ASK.chat('What is Project  Nightingale?', true))).toMatchObject({
      status: 403,
      message: 'The request matches a pattern this gateway refuses.',
    });
    for (const ask of Object.values(ASK)) {
      for (const stream of [false, true])
        expect(await ask('order 1234 5678 9012 3456 shipped', stream)).toBe('order 1234 5678 9012 3456 shipped');
    }
  });
});

describe('holdsCardNumber', () => {
  it('finds digit runs that pass the Luhn check, with spaces or dashes, and nothing else', () => {
    expect(['4111111111111111', '5500-0000-0000-0004', `card ${CARD}.`].map(holdsCardNumber)).toEqual([
      true,
      true,
      true,
    ]);
    expect(['1234 5678 9012 3456', '4111 1111 1111', 'call 555-0100'].map(holdsCardNumber)).toEqual([
      false,
      false,
      false,
    ]);
  });
});
