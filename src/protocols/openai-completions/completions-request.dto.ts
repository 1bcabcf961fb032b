import { IsBoolean, IsInt, IsNotEmpty, IsNumber, IsString, Max, Min, ValidateBy } from 'class-validator';
import { StreamOptionsDto } from '../openai-chat/chat-request.dto.js';
import { IsStringOrStringList } from '../validation/custom-validators.js';
import { NestedObject, Nullable, Optional } from '../validation/dto-fields.js';

/** `POST /v1/completions` (OpenAI's legacy Completions; what editors' autocomplete speaks). */
export class CompletionsRequestDto {
  @IsString()
  @IsNotEmpty()
  model!: string;

  @IsPrompt()
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
  @Max(1, { message: 'n must be 1: this gateway streams one choice per request' })
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

/**
 * One prompt: a string, a list holding one string, token ids, or a list holding one list of them.
 * Several prompts are several choices, which one stream of events does not carry (as `n`).
 */
function IsPrompt(): PropertyDecorator {
  return ValidateBy({
    name: 'isPrompt',
    validator: {
      validate: (value) => {
        if (typeof value === 'string') return true;
        if (!Array.isArray(value) || value.length === 0) return false;
        if (value.every(isTokenId)) return true;
        return (
          value.length === 1 &&
          (typeof value[0] === 'string' ||
            (Array.isArray(value[0]) && value[0].length > 0 && value[0].every(isTokenId)))
        );
      },
      defaultMessage: () =>
        'prompt must be a string, token ids, or a list holding one of them: this gateway completes one prompt per request',
    },
  });
}
