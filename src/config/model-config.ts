import type { HttpModelConfig } from './models/http-model-config.js';
import type { LlamaModelConfig } from './models/llama-model-config.js';
import type { StubModelConfig } from './models/stub-model-config.js';

export { ModelConfigBase } from './models/model-config-base.js';
export { HttpModelConfig } from './models/http-model-config.js';
export { LlamaModelConfig, LLAMA_GPU_KINDS } from './models/llama-model-config.js';
export { StubModelConfig, STUB_FAILURE_KINDS } from './models/stub-model-config.js';

/** A model entry of the configuration: `name`, `engine` and that engine's own keys. */
export type ModelConfig = StubModelConfig | HttpModelConfig | LlamaModelConfig;
