import { IsBoolean, IsInt, IsNotEmpty, IsString, Min, ValidateBy } from 'class-validator';
import type { PoolingPassRequest, PoolingPassResult } from '../../engine/pooling.js';
import { Nullable } from '../validation/dto-fields.js';
import { IsStringOrStringList } from '../validation/custom-validators.js';

/** Where rerank is served: Gantry's path and vLLM's aliases (Jina's `/v1/rerank`, Cohere's `/v2/rerank`). */
export const RERANK_PATHS = ['/v1/rerank', '/rerank', '/v2/rerank'] as const;

/** The largest number of documents or texts one request may hold. */
const MAX_ITEMS = 4096;

/** `POST /v1/rerank` (Jina and Cohere's shape, as vLLM serves it); other fields pass on unread. */
export class RerankRequestDto {
  @IsString()
  @IsNotEmpty()
  model!: string;

  @IsString()
  query!: string;

  @IsDocumentList()
  documents!: Array<string | Record<string, unknown>>;

  @Nullable()
  @IsInt()
  @Min(1)
  top_n?: number;

  @Nullable()
  @IsBoolean()
  return_documents?: boolean;
}

/** `POST /v1/score` (vLLM: `text_1` against each of `text_2`); other fields pass on unread. */
export class ScoreRequestDto {
  @IsString()
  @IsNotEmpty()
  model!: string;

  @IsStringOrStringList(MAX_ITEMS)
  text_1!: string | string[];

  @IsStringOrStringList(MAX_ITEMS)
  text_2!: string | string[];
}

/** The request an engine passes on (the raw body, every field as it came), and its texts for admission's estimate. */
export function decodePoolingPass(
  body: RerankRequestDto | ScoreRequestDto,
  raw: unknown,
): { request: PoolingPassRequest; texts: string[] } {
  const texts =
    body instanceof RerankRequestDto
      ? [body.query, ...body.documents.map((document) => (typeof document === 'string' ? document : textOf(document)))]
      : [...[body.text_1].flat(), ...[body.text_2].flat()];
  return { request: { model: body.model, body: { ...(raw as Record<string, unknown>) } }, texts };
}

/** The engine's answer under the client's model name. */
export function toPoolingPassBody(result: PoolingPassResult, model: string): Record<string, unknown> {
  return { ...result.body, model };
}

function textOf(document: Record<string, unknown>): string {
  return typeof document.text === 'string' ? document.text : '';
}

/** A non-empty list of documents: strings, or objects (`{"text": ...}`, or a multimodal part). */
function IsDocumentList(): PropertyDecorator {
  return ValidateBy({
    name: 'isDocumentList',
    validator: {
      validate: (value) =>
        Array.isArray(value) &&
        value.length > 0 &&
        value.length <= MAX_ITEMS &&
        value.every(
          (item) => typeof item === 'string' || (typeof item === 'object' && item !== null && !Array.isArray(item)),
        ),
      defaultMessage: () => `documents must be a non-empty list of at most ${MAX_ITEMS} strings or objects`,
    },
  });
}
