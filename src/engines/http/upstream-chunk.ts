/**
 * The parts of an upstream `chat.completion.chunk` that Gantry reads, as vLLM, SGLang, llama.cpp,
 * TGI and Ollama send them. Everything is optional: servers omit unset fields (vLLM serializes
 * with `exclude_unset`) and differ in what they add.
 */
export interface UpstreamChunk {
  object?: string;
  choices?: UpstreamChoice[];
  usage?: UpstreamUsage | null;
  /** llama.cpp's timings block (`timings_per_token`: prompt and predicted counts, ms and speeds). */
  timings?: Record<string, unknown>;
  /** An in-band failure: OpenAI/vLLM `{message, type, code}`, or TGI's plain string. */
  error?: unknown;
  /** vLLM before 0.10.1 sent flat errors: `{"object": "error", "message", "code"}`. */
  message?: unknown;
  code?: unknown;
  /** TGI's kind of in-band error (`validation`, `generation`, ...). */
  error_type?: unknown;
}

export interface UpstreamChoice {
  index?: number;
  delta?: UpstreamDelta;
  /** A whole (non-streaming) answer's message: the same fields as a delta. */
  message?: UpstreamDelta;
  /** A `text_completion` choice's text (`/v1/completions`), read as a delta's content. */
  text?: string;
  /** A `text_completion` choice's log probabilities, when asked for (completion-logprobs.ts). */
  logprobs?: unknown;
  finish_reason?: string | null;
  /** vLLM: the stop string (or token id) that ended the output. */
  stop_reason?: string | number | null;
}

export interface UpstreamDelta {
  role?: string;
  content?: string | null;
  /** vLLM since late 2025, OpenRouter. */
  reasoning?: string | null;
  /** llama.cpp, DeepSeek, vLLM before `reasoning` replaced it. */
  reasoning_content?: string | null;
  tool_calls?: UpstreamToolCallDelta[];
}

export interface UpstreamToolCallDelta {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

export interface UpstreamUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
}
