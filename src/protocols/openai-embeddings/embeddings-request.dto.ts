import { IsIn, IsInt, IsNotEmpty, IsString, Min, ValidateBy } from 'class-validator';
import { Nullable, Optional } from '../validation/dto-fields.js';

/** OpenAI's limit on inputs per request. */
export const MAX_EMBEDDING_INPUTS = 2048;

/** `POST /v1/embeddings` (OpenAI Embeddings; vLLM's pooling models serve the same). */
export class EmbeddingsRequestDto {
  @IsString()
  @IsNotEmpty()
  model!: string;

  @IsEmbeddingInput()
  input!: string | string[] | number[] | number[][];

  @Nullable()
  @IsIn(['float', 'base64'])
  encoding_format?: 'float' | 'base64';

  @Nullable()
  @IsInt()
  @Min(1)
  dimensions?: number;

  @Optional()
  @IsString()
  user?: string;
}

const isTokenId = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;
const isTokenList = (value: unknown) => Array.isArray(value) && value.length > 0 && value.every(isTokenId);

/** A string, a list of strings, a list of token ids, or a list of such lists: never empty. */
function IsEmbeddingInput(): PropertyDecorator {
  return ValidateBy({
    name: 'isEmbeddingInput',
    validator: {
      validate: (value) => {
        if (typeof value === 'string') return value.length > 0;
        if (!Array.isArray(value) || value.length === 0 || value.length > MAX_EMBEDDING_INPUTS) return false;
        if (value.every((item) => typeof item === 'string' && item.length > 0)) return true;
        return isTokenList(value) || value.every(isTokenList);
      },
      defaultMessage: () =>
        `input must be a non-empty string, a list of at most ${MAX_EMBEDDING_INPUTS} non-empty strings, a list of token ids, or a list of such lists`,
    },
  });
}
