import { createHash } from 'node:crypto';
import type { EmbeddingRequest, EmbeddingResult } from '../../engine/pooling.js';
import { ZERO_USAGE } from '../../engine/engine-event.js';

/** The stub's vector length when the request asks for no `dimensions`. */
export const STUB_EMBEDDING_DIMENSIONS = 32;

/**
 * The stub's embeddings: a unit vector drawn from the SHA-256 of each input (the same text, the
 * same vector, on any gateway), `dimensions` long; its tokens counted as words (token ids one each).
 */
export function stubEmbeddings(request: EmbeddingRequest): EmbeddingResult {
  const dimensions = request.dimensions ?? STUB_EMBEDDING_DIMENSIONS;
  let promptTokens = 0;
  const vectors = request.input.map((item) => {
    const text = typeof item === 'string' ? item : item.join(',');
    promptTokens += typeof item === 'string' ? item.split(/\s+/).filter(Boolean).length : item.length;
    return unitVector(`${typeof item === 'string' ? 't' : 'i'}:${text}`, dimensions);
  });
  return { vectors, usage: { ...ZERO_USAGE, promptTokens } };
}

function unitVector(seed: string, dimensions: number): number[] {
  const values: number[] = [];
  for (let block = 0; values.length < dimensions; block += 1) {
    const digest = createHash('sha256').update(`${block}\u0000${seed}`).digest();
    for (let offset = 0; offset < digest.length && values.length < dimensions; offset += 2)
      values.push(digest.readUInt16LE(offset) / 32768 - 1);
  }
  const norm = Math.hypot(...values) || 1;
  // Rounded to float32, as a real engine's vectors are: base64 and float answers then agree exactly.
  return values.map((value) => Math.fround(value / norm));
}
