import {
  LlamaGrammarEvaluationState,
  type GbnfJsonSchema,
  type Llama,
  type LlamaModel,
  type SequenceEvaluateOptions,
  type Token,
} from 'node-llama-cpp';
import { EngineError } from '../../engine/engine-error.js';
import type { SamplingParams } from '../../engine/generation-request.js';

/**
 * llama.cpp server's defaults for what the client leaves unset (temperature 0.8, top_k 40,
 * top_p 0.95, min_p 0.05): the same request gets the same sampling here as on llama-server.
 */
/** The client's JSON Schema; OpenAI's structured outputs require an object at its root. */
type JsonSchemaObject = Extract<GbnfJsonSchema, { type: 'object' }>;

const DEFAULTS = { temperature: 0.8, topK: 40, topP: 0.95, minP: 0.05 } as const;

/**
 * The request's sampling as node-llama-cpp evaluate options: temperature (0 = greedy), top_p,
 * top_k (0 or less: off), seed, frequency and presence penalties over the generated tokens, and a
 * grammar for `response_format` json_object / json_schema.
 */
export async function toEvaluateOptions(
  sampling: SamplingParams,
  generated: Token[],
  runtime: { llama: Llama; model: LlamaModel },
): Promise<SequenceEvaluateOptions> {
  const options: SequenceEvaluateOptions = {
    temperature: sampling.temperature ?? DEFAULTS.temperature,
    topK: Math.max(0, sampling.topK ?? DEFAULTS.topK),
    topP: sampling.topP ?? DEFAULTS.topP,
    minP: DEFAULTS.minP,
    seed: sampling.seed,
  };
  const frequencyPenalty = sampling.frequencyPenalty ?? 0;
  const presencePenalty = sampling.presencePenalty ?? 0;
  if (frequencyPenalty !== 0 || presencePenalty !== 0) {
    options.repeatPenalty = { punishTokens: () => generated, penalty: 1, frequencyPenalty, presencePenalty };
  }
  const grammar = await grammarFor(sampling, runtime);
  if (grammar) options.grammarEvaluationState = grammar;
  return options;
}

async function grammarFor(
  sampling: SamplingParams,
  { llama, model }: { llama: Llama; model: LlamaModel },
): Promise<LlamaGrammarEvaluationState | undefined> {
  const format = sampling.responseFormat;
  if (format === undefined || format.type === 'text') return undefined;
  try {
    const grammar =
      format.type === 'json_object'
        ? await llama.getGrammarFor('json')
        : await llama.createGrammarForJsonSchema(format.schema as unknown as Readonly<JsonSchemaObject>);
    return new LlamaGrammarEvaluationState({ model, grammar });
  } catch (error) {
    throw new EngineError(
      'invalid_request',
      `response_format: this JSON schema cannot be enforced (${(error as Error).message}).`,
      {
        param: 'response_format',
      },
    );
  }
}
