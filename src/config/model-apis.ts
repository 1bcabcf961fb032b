/**
 * The APIs a model may serve (`models[].apis`), as telemetry names them: the four generation APIs,
 * and the pooling APIs of an embedding or scoring model (docs/apis.md).
 */
export const MODEL_APIS = ['chat', 'responses', 'messages', 'completions', 'embeddings', 'rerank', 'score'] as const;

export type ModelApi = (typeof MODEL_APIS)[number];

/** The APIs every engine serves through `generate`. */
export const GENERATION_APIS: readonly ModelApi[] = ['chat', 'responses', 'messages', 'completions'];
