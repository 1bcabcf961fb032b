import type { AnswerResume } from './answer-resume.js';

/**
 * A protocol-neutral generation: what every client API decodes into and every engine reads.
 * Nothing here names a wire format; encoders keep their own stream options.
 */
export interface GenerationRequest {
  /** The gateway's model name (the configured alias, not an upstream's name). */
  model: string;
  messages: ChatMessage[];
  tools: ToolDefinition[];
  toolChoice: ToolChoice;
  /** False when the client asked for at most one tool call per turn. */
  parallelToolCalls: boolean;
  sampling: SamplingParams;
  /** Whether the client wants reasoning output (a thinking budget, reasoning effort). */
  reasoning?: { enabled: boolean; budgetTokens?: number };
  /**
   * Whether reasoning reaches the client: `hide` where its API sends none unless asked (Messages
   * without `thinking` enabled). Hidden reasoning is dropped before the keep-alive and the
   * encoders, so it neither shows nor ends the heartbeats; its tokens still count in usage's
   * completion tokens (its counters go on as acks).
   * Absent: shown.
   */
  reasoningOutput?: 'show' | 'hide';
  /**
   * False when the client reads the answer whole (a non-streaming request): an engine may then
   * produce it in one piece (the HTTP engine asks its upstream for one JSON answer). Absent: streamed.
   */
  stream?: boolean;
  /** W3C trace context (`traceparent`, `tracestate`) that engines calling out over HTTP forward. */
  traceHeaders?: Record<string, string>;
  /** Called when the engine continues the answer elsewhere after a failure cut it (the HTTP engine's mid-stream failover). */
  onResume?: (resume: AnswerResume) => void;
  /**
   * A raw completion (`POST /v1/completions`): the prompt is continued as it is, no chat template.
   * `messages` then holds the prompt's text as one user message (what estimates and the stub read).
   */
  completion?: CompletionPrompt;
}

/** A raw completion's prompt and the fields only a completion has. */
export interface CompletionPrompt {
  /** Text, or token ids: the first prompt of a request with several. */
  prompt: string | number[];
  /** Every prompt, where the request has several; each is a choice (`n` of them) of the answer. */
  prompts?: Array<string | number[]>;
  /** Choices per prompt (`n`); absent: one. */
  n?: number;
  /** Text after the insertion point (fill-in-the-middle). */
  suffix?: string;
  /** The prompt is repeated before the completion. */
  echo?: boolean;
  /** Log probabilities of the top N tokens: passed on, where an engine can. */
  logprobs?: number;
  /** Fields the client sent that Gantry does not read (`best_of`, `logit_bias`...), passed on to an upstream unread. */
  extra: Record<string, unknown>;
}

export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage;

export interface SystemMessage {
  role: 'system';
  content: string;
}

export interface UserMessage {
  role: 'user';
  content: ContentPart[];
}

export interface AssistantMessage {
  role: 'assistant';
  content: string;
  reasoning?: string;
  toolCalls?: ToolCall[];
}

export interface ToolResultMessage {
  role: 'tool';
  toolCallId: string;
  content: string;
  isError?: boolean;
}

export type ContentPart = { type: 'text'; text: string } | { type: 'image'; url: string };

export interface ToolCall {
  id: string;
  name: string;
  /** The arguments as a JSON text, exactly as the model produced them. */
  arguments: string;
}

export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. */
  parameters?: Record<string, unknown>;
  strict?: boolean;
}

export type ToolChoice = 'none' | 'auto' | 'required' | { name: string };

export interface SamplingParams {
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  seed?: number;
  stop: string[];
  frequencyPenalty?: number;
  presencePenalty?: number;
  responseFormat?: ResponseFormat;
}

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean };

/**
 * The client did not ask for reasoning: it turned it off, or would not be shown it. An engine
 * configured with a way to tell its model not to reason uses it for such a request.
 */
export function reasoningUnwanted(request: GenerationRequest): boolean {
  return request.reasoning?.enabled === false || request.reasoningOutput === 'hide';
}

/** The text of a user message, its text parts joined. */
export function textOf(message: UserMessage): string {
  return message.content
    .filter((part): part is { type: 'text'; text: string } => part.type === 'text')
    .map((part) => part.text)
    .join('\n');
}
