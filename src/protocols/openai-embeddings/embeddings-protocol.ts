import type { EmbeddingRequest, EmbeddingResult } from '../../engine/pooling.js';
import { extraFieldsOf } from '../extra-fields.js';
import type { EmbeddingsRequestDto } from './embeddings-request.dto.js';
import { toBase64Vector, toFloatVector } from './vector-encoding.js';

const KNOWN_FIELDS = ['model', 'input', 'encoding_format', 'dimensions', 'user'];

/** A validated embeddings body (and the raw one, for what Gantry passes on unread) to the engine's request. */
export function decodeEmbeddingsRequest(body: EmbeddingsRequestDto, raw: unknown): EmbeddingRequest {
  const { input } = body;
  return {
    model: body.model,
    input:
      typeof input === 'string'
        ? [input]
        : typeof input[0] === 'number'
          ? [input as number[]]
          : (input as string[] | number[][]),
    encodingFormat: body.encoding_format ?? 'float',
    dimensions: body.dimensions,
    user: body.user,
    extra: extraFieldsOf(raw, KNOWN_FIELDS),
  };
}

/** The texts of an embeddings request, for admission's estimate (token ids are counted by their number). */
export function embeddingTexts(request: EmbeddingRequest): string[] {
  return request.input.map((item) => (typeof item === 'string' ? item : ' '.repeat(item.length * 4)));
}

/** OpenAI's embeddings answer, under the client's model name, each vector in the encoding it asked for. */
export function toEmbeddingsBody(result: EmbeddingResult, model: string, encodingFormat: 'float' | 'base64') {
  return {
    object: 'list',
    data: result.vectors.map((vector, index) => ({
      object: 'embedding',
      index,
      embedding: encodingFormat === 'base64' ? toBase64Vector(vector) : toFloatVector(vector),
    })),
    model,
    usage: { prompt_tokens: result.usage.promptTokens, total_tokens: result.usage.promptTokens },
  };
}
