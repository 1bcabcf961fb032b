import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { OpenAIEmbeddings } from '@langchain/openai';
import { OpenAIEmbedding } from '@llamaindex/openai';
import { cosineSimilarity, embed, embedMany } from 'ai';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { useClientGateway } from './support/client-gateway.js';

// Embedding clients on their defaults (only the base URL and the key set): the stub's vectors
// (the same text, the same vector) and the HTTP engine's, passed from the mock upstream.
(globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS = false;
const served = useClientGateway();

describe.each(['stub', 'upstream'])('embeddings on %s', (model) => {
  it('the OpenAI SDK (base64 by default, decoded by the SDK)', async () => {
    const client = new OpenAI({ baseURL: served().baseURL, apiKey: 'test-key', maxRetries: 0 });
    const answer = await client.embeddings.create({ model, input: ['red apple', 'green pear'] });
    expect(answer.model).toBe(model);
    expect(answer.data).toHaveLength(2);
    expect(answer.data[0].embedding.every((value) => Number.isFinite(value))).toBe(true);
    const again = await client.embeddings.create({ model, input: 'red apple', encoding_format: 'float' });
    // Float32 both ways: the decoded base64 equals the float answer.
    expect(again.data[0].embedding).toEqual(answer.data[0].embedding);
    expect(answer.usage.prompt_tokens).toBe(4);
  });

  it('the AI SDK’s embed and embedMany (@ai-sdk/openai and openai-compatible)', async () => {
    const providers = [
      createOpenAI({ baseURL: served().baseURL, apiKey: 'test-key' }).embedding(model),
      createOpenAICompatible({ name: 'gantry', baseURL: served().baseURL, apiKey: 'test-key' }).embeddingModel(model),
    ];
    for (const embeddingModel of providers) {
      const one = await embed({ model: embeddingModel, value: 'red apple', maxRetries: 0 });
      const many = await embedMany({ model: embeddingModel, values: ['red apple', 'green pear'], maxRetries: 0 });
      expect(many.embeddings).toHaveLength(2);
      expect(cosineSimilarity(one.embedding, many.embeddings[0])).toBeCloseTo(1, 5);
      expect(cosineSimilarity(many.embeddings[0], many.embeddings[1])).toBeLessThan(0.99);
      expect(one.usage.tokens).toBe(2);
    }
  });

  it('LangChain’s OpenAIEmbeddings', async () => {
    const embeddings = new OpenAIEmbeddings({
      model,
      apiKey: 'test-key',
      configuration: { baseURL: served().baseURL },
    });
    const documents = await embeddings.embedDocuments(['red apple', 'green pear']);
    const query = await embeddings.embedQuery('red apple');
    expect(documents).toHaveLength(2);
    expect(query).toEqual(documents[0]);
    expect(query).not.toEqual(documents[1]);
  });

  it('LlamaIndex’s OpenAIEmbedding', async () => {
    const embedding = new OpenAIEmbedding({ model, apiKey: 'test-key', baseURL: served().baseURL });
    const documents = await embedding.getTextEmbeddings(['red apple', 'green pear']);
    const query = await embedding.getQueryEmbedding({ type: 'text', text: 'red apple' });
    expect(documents).toHaveLength(2);
    expect(documents[0].every((value) => Number.isFinite(value))).toBe(true);
    expect(query).toEqual(documents[0]);
    expect(query).not.toEqual(documents[1]);
  });
});
