import { execFile, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { useClientGateway } from './support/client-gateway.js';

// The OpenAI Python SDK, where this machine has it: on the import path, or in .tmp/python where
// .ci/run installs it when a package index is reachable. Skipped (and said so) without it.
const PYTHONPATH = [resolve('.tmp/python'), process.env.PYTHONPATH].filter(Boolean).join(':');
const env = { ...process.env, PYTHONPATH };
const importable = spawnSync('python3', ['-c', 'import openai'], { env, stdio: 'ignore' }).status === 0;
if (!importable) console.warn('The OpenAI Python SDK is not installed here: its client tests are skipped.');
const run = promisify(execFile);

describe.skipIf(!importable)('the OpenAI Python SDK on its defaults', () => {
  const served = useClientGateway();

  it.each(['stub', 'upstream'])(
    'embeds (base64 by default), completes with several choices and chats on %s',
    async (model) => {
      const { stdout } = await run('python3', [resolve('test/clients/python/openai_sdk.py'), served().baseURL, model], {
        env,
        timeout: 60_000,
      });
      const out = JSON.parse(stdout);
      expect(out.embeddings).toEqual({
        count: 2,
        finite: true,
        base64_equals_float: true,
        differ: true,
        prompt_tokens: 4,
      });
      expect(out.completion).toMatchObject({ object: 'text_completion', finish: 'stop' });
      expect(out.completion.text.length).toBeGreaterThan(0);
      expect(out.streamed_choices.finishes).toHaveLength(4);
      expect(out.streamed_choices.texts[0]).toBe(out.streamed_choices.texts[1]);
      expect(out.streamed_choices.usage.completion_tokens).toBeGreaterThan(0);
      expect(out.chat.length).toBeGreaterThan(0);
    },
  );
});
