import { describe, expect, it } from 'vitest';
import { readContentChunk } from './content-chunk-shortcut.js';

const head =
  '{"id":"chatcmpl-9a","object":"chat.completion.chunk","created":1767225600,"model":"Qwen/Qwen3-8B","choices":';
const content = (delta: string, tail = '') =>
  `${head}[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":null}]${tail}}`;
const usage = ',"usage":{"prompt_tokens":12,"total_tokens":15,"completion_tokens":3}';

describe('readContentChunk', () => {
  it('reads vLLM content and reasoning chunks as JSON.parse would, for the fields the decoder uses', () => {
    const cases = [
      content('{"content":" world"}', usage),
      content('{"content":"say \\"hi\\"\\n\\u00e9\\ud83d\\ude00 \\\\ done"}', usage),
      content('{"content":"naïve 日本"}'),
      content('{"reasoning_content":"let me think"}', ',"usage":null'),
      content('{"reasoning":"hmm"}', usage),
      content('{"content":""}', usage),
      // Text that looks like the chunk's own syntax, and large counts.
      content(
        '{"content":"},\\"logprobs\\":null,\\"finish_reason\\":null}] \\"delta\\":{\\""}',
        ',"usage":{"prompt_tokens":123456,"total_tokens":123457,"completion_tokens":1}',
      ),
      content('{"content":"\\\\"}', ',"usage":{"prompt_tokens":0,"total_tokens":98765,"completion_tokens":98765}'),
    ];
    for (const data of cases) {
      const parsed = JSON.parse(data);
      const read = readContentChunk(data);
      expect(read, data).toBeDefined();
      expect(read!.choices).toEqual([{ index: 0, delta: parsed.choices[0].delta, finish_reason: null }]);
      if (parsed.usage)
        expect(read!.usage).toEqual({
          prompt_tokens: parsed.usage.prompt_tokens,
          completion_tokens: parsed.usage.completion_tokens,
        });
      else expect(read!.usage).toBe(parsed.usage);
    }
  });

  it('leaves every other shape to JSON.parse', () => {
    const others = [
      content('{"role":"assistant","content":""}', usage),
      content('{"content":"a","reasoning_content":"b"}', usage),
      content('{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}'),
      `${head}[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]${usage}}`,
      `${head}[{"index":1,"delta":{"content":"x"},"logprobs":null,"finish_reason":null}]}`,
      content(
        '{"content":"x"}',
        ',"usage":{"prompt_tokens":1,"total_tokens":2,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":1}}',
      ),
      content('{"content":"x"}', ',"timings":{"prompt_n":1}'),
      content('{"content":"raw\ncontrol"}'),
      content('{"content":"bad \\x escape"}'),
      '{"error":{"message":"boom"}}',
      `${content('{"content":"x"}')} `,
    ];
    for (const data of others) expect(readContentChunk(data), data).toBeUndefined();
  });
});
