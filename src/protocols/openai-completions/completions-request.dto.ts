import { IsBoolean, IsInt, IsNotEmpty, IsNumber, IsString, Max, Min, ValidateBy } from 'class-validator';
import { StreamOptionsDto } from '../openai-chat/chat-request.dto.js';
import { IsStringOrStringList } from '../validation/custom-validators.js';
import { NestedObject, Nullable, Optional } from '../validation/dto-fields.js';

/** The most choices (prompts times `n`) one request may ask for: OpenAI's cap on `n`. */
export const MAX_COMPLETION_CHOICES = 128;

/** `POST /v1/completions` (OpenAI's legacy Completions; what editors' autocomplete speaks). */
export class CompletionsRequestDto {
  @IsString()
  @IsNotEmpty()
  model!: string;

  @IsPrompt()
  @ChoicesWithin(MAX_COMPLETION_CHOICES)
  prompt!: string | string[] | number[] | number[][];

  @Nullable()
  @IsString()
  suffix?: string;

  @Nullable()
  @IsBoolean()
  echo?: boolean;

  @Nullable()
  @IsInt()
  @Min(0)
  @Max(20)
  logprobs?: number;

  @Nullable()
  @IsInt()
  @Min(1)
  max_tokens?: number;

  @Nullable()
  @IsNumber()
  @Min(0)
  @Max(2)
  temperature?: number;

  @Nullable()
  @IsNumber()
  @Min(0)
  @Max(1)
  top_p?: number;

  @Nullable()
  @IsInt()
  top_k?: number;

  @Nullable()
  @IsInt()
  seed?: number;

  @Nullable()
  @IsStringOrStringList(16)
  stop?: string | string[];

  @Nullable()
  @IsNumber()
  @Min(-2)
  @Max(2)
  frequency_penalty?: number;

  @Nullable()
  @IsNumber()
  @Min(-2)
  @Max(2)
  presence_penalty?: number;

  @Nullable()
  @IsInt()
  @Min(1)
  @Max(MAX_COMPLETION_CHOICES)
  n?: number;

  @Nullable()
  @IsBoolean()
  stream?: boolean;

  @Nullable()
  @NestedObject(() => StreamOptionsDto)
  stream_options?: StreamOptionsDto;

  @Optional()
  @IsString()
  user?: string;
}

const isTokenId = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;
const isTokenList = (value: unknown) => Array.isArray(value) && value.length > 0 && value.every(isTokenId);

/** The prompts of a valid `prompt`: one for a string or token ids, else one per item. */
export function promptsOf(prompt: CompletionsRequestDto['prompt']): Array<string | number[]> {
  if (typeof prompt === 'string' || prompt.every(isTokenId)) return [prompt as string | number[]];
  return prompt as Array<string | number[]>;
}

/** A prompt: a string, token ids, or a list of either (several prompts, each its own choices). */
function IsPrompt(): PropertyDecorator {
  return ValidateBy({
    name: 'isPrompt',
    validator: {
      validate: (value) => {
        if (typeof value === 'string') return true;
        if (!Array.isArray(value) || value.length === 0) return false;
        return (
          value.every(isTokenId) ||
          value.every((item) => typeof item === 'string') ||
          value.every((item) => isTokenList(item))
        );
      },
      defaultMessage: () => 'prompt must be a string, token ids, or a non-empty list of strings or of token id lists',
    },
  });
}

/** The prompts times `n` (the choices of the answer, each a generation) stay within `max`. */
function ChoicesWithin(max: number): PropertyDecorator {
  return ValidateBy({
    name: 'choicesWithin',
    constraints: [max],
    validator: {
      validate: (value, args) => {
        if (typeof value !== 'string' && !Array.isArray(value)) return true;
        const prompts = typeof value === 'string' || value.every(isTokenId) ? 1 : value.length;
        const n = (args?.object as { n?: unknown } | undefined)?.n;
        // An `n` past the cap by itself is refused as `n`.
        const copies = typeof n === 'number' && n > 1 && n <= max ? n : 1;
        return prompts * copies <= max;
      },
      defaultMessage: () => `the prompts times n must be at most ${max}: each is a generation`,
    },
  });
}
