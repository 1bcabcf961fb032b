/**
 * What a Chat Completions stream frame is, told from its data without parsing the JSON (the load
 * generator sees hundreds of thousands of them and must stay cheap next to the servers it loads):
 * - `token`: a chunk with non-empty `content` or reasoning (one token on the mock and the stub);
 * - `heartbeat`: Gantry's keep-alive chunk, `"delta":{}` with `"finish_reason":null`;
 * - `done`: `[DONE]`; `error`: an in-band `{"error": ...}`;
 * - `other`: the role chunk, the finish chunk, the usage chunk.
 */
export type ChatFrameKind = 'token' | 'heartbeat' | 'done' | 'error' | 'other';

const OUTPUT = /"(?:content|reasoning_content|reasoning)":"(?!")/;

export function classifyChatData(data: string): ChatFrameKind {
  if (data === '[DONE]') return 'done';
  if (data.startsWith('{"error"')) return 'error';
  if (data.includes('"delta":{}')) return data.includes('"finish_reason":null') ? 'heartbeat' : 'other';
  return OUTPUT.test(data) ? 'token' : 'other';
}

/** `usage.completion_tokens` of a usage chunk (`"choices":[]`), else undefined. */
export function completionTokensOf(data: string): number | undefined {
  if (!data.includes('"choices":[]') || !data.includes('"usage"')) return undefined;
  try {
    const tokens = (JSON.parse(data) as { usage?: { completion_tokens?: unknown } }).usage?.completion_tokens;
    return typeof tokens === 'number' ? tokens : undefined;
  } catch {
    return undefined;
  }
}
