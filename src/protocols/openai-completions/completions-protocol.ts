import type { GenerationRequest } from '../../engine/generation-request.js';
import type { GenerationChoice, GenerationResult } from '../../streaming/collect-generation.js';
import { extraFieldsOf } from '../extra-fields.js';
import { newId, unixSeconds } from '../ids.js';
import { toChatFinishReason } from '../openai-chat/chat-usage.js';
import type { ProtocolDescriptor } from '../protocol-descriptor.js';
import { type CompletionsRequestDto, promptsOf } from './completions-request.dto.js';
import { encodeCompletionsStream, toCompletionUsage, type CompletionIdentity } from './encode-completions-stream.js';

/** The fields the decoder reads; every other one goes to an upstream unread (docs/apis.md). */
const KNOWN_FIELDS = [
  'model',
  'prompt',
  'suffix',
  'echo',
  'logprobs',
  'max_tokens',
  'temperature',
  'top_p',
  'top_k',
  'seed',
  'stop',
  'frequency_penalty',
  'presence_penalty',
  'n',
  'stream',
  'stream_options',
];

/** A validated Completions body (and the raw one, for the fields passed on unread) to a raw-completion generation. */
export function decodeCompletionsRequest(body: CompletionsRequestDto, raw: unknown): GenerationRequest {
  const prompts = promptsOf(body.prompt);
  const [prompt] = prompts;
  // Estimates and the stub read the text of every prompt.
  const text = prompts.filter((each) => typeof each === 'string').join('\n');
  return {
    model: body.model,
    messages: [{ role: 'user', content: [{ type: 'text', text }] }],
    tools: [],
    toolChoice: 'none',
    parallelToolCalls: false,
    sampling: {
      maxTokens: body.max_tokens,
      temperature: body.temperature,
      topP: body.top_p,
      topK: body.top_k,
      seed: body.seed,
      stop: body.stop === undefined ? [] : typeof body.stop === 'string' ? [body.stop] : body.stop,
      frequencyPenalty: body.frequency_penalty,
      presencePenalty: body.presence_penalty,
    },
    reasoning: { enabled: false },
    completion: {
      prompt,
      ...(prompts.length > 1 ? { prompts } : {}),
      ...((body.n ?? 1) > 1 ? { n: body.n } : {}),
      suffix: body.suffix,
      echo: body.echo,
      logprobs: body.logprobs,
      extra: { ...extraFieldsOf(raw, KNOWN_FIELDS), ...(body.user === undefined ? {} : { user: body.user }) },
    },
  };
}

/** The non-streaming `text_completion` body. */
export function toCompletion(result: GenerationResult, identity: CompletionIdentity) {
  return {
    id: identity.id,
    object: 'text_completion' as const,
    created: identity.created,
    model: identity.model,
    choices: choicesOf(result).map((choice, index) => ({
      index,
      text: choice.text,
      logprobs: choice.logprobs ?? null,
      finish_reason: toChatFinishReason(choice.finishReason),
    })),
    usage: toCompletionUsage(result.usage),
  };
}

/** A result's choices: those of a completion with several, else the one. */
function choicesOf(result: GenerationResult): GenerationChoice[] {
  return result.choices ?? [{ text: result.text, finishReason: result.finishReason, logprobs: result.logprobs }];
}

/**
 * OpenAI Completions: `POST /v1/completions`, streaming and not, fill-in-the-middle with `suffix`.
 * The route serves each request with `completionsProtocol(raw)`, whose decoder passes on the fields
 * it does not read; this one, listed among the generation protocols, reads the validated body alone.
 */
export const COMPLETIONS_PROTOCOL: ProtocolDescriptor<CompletionsRequestDto, CompletionIdentity> = {
  api: 'completions',
  path: '/v1/completions',
  dialect: 'openai',
  countsPromptTokens: false,
  fieldNames: () => ({ maxTokens: 'max_tokens', messages: 'prompt' }),
  decode: (body) => decodeCompletionsRequest(body, undefined),
  identify: (body) => ({ id: newId('cmpl-'), model: body.model, created: unixSeconds() }),
  toBody: (result, identity) => toCompletion(result, identity),
  encode: (body, identity) =>
    encodeCompletionsStream({ ...identity, includeUsage: body.stream_options?.include_usage === true }),
};

/** The descriptor for one request, its raw body at hand for the fields passed on unread. */
export function completionsProtocol(raw: unknown): ProtocolDescriptor<CompletionsRequestDto, CompletionIdentity> {
  return { ...COMPLETIONS_PROTOCOL, decode: (body) => decodeCompletionsRequest(body, raw) };
}
