/**
 * Gantry's public entry (the package's `exports['.']`): what a plugin needs, and nothing of the
 * gateway's insides. A plugin is a Nest module listed under `plugins:`; its providers may be engine
 * kinds (`@EngineKind`), guards (Nest's `CanActivate` as `APP_GUARD`), the metadata those guards
 * read on the generation routes (`@GenerationRouteMetadata`) and generation hooks
 * (`GenerationHook`). Import these from here only: the gateway finds a plugin's pieces by these
 * very classes. `src/index.spec.ts` pins the list, values and types.
 */
export { ModelConfigBase } from './config/model-config.js';
export type { AnswerResume } from './engine/answer-resume.js';
export { ContextLengthError } from './engine/context-length-error.js';
export { EngineError, type EngineErrorKind } from './engine/engine-error.js';
export {
  ACCEPTED,
  countersOf,
  isOutput,
  makeTimings,
  RESUMING,
  ZERO_USAGE,
  type AcceptedEvent,
  type AckEvent,
  type DoneEvent,
  type EngineEvent,
  type FinishReason,
  type OutputCounters,
  type ReasoningDelta,
  type ResumingEvent,
  type TextDelta,
  type Timings,
  type TokenUsage,
  type ToolCallDelta,
} from './engine/engine-event.js';
export {
  textOf,
  type AssistantMessage,
  type ChatMessage,
  type CompletionPrompt,
  type ContentPart,
  type GenerationRequest,
  type ResponseFormat,
  type SamplingParams,
  type SystemMessage,
  type ToolCall,
  type ToolChoice,
  type ToolDefinition,
  type ToolResultMessage,
  type UserMessage,
} from './engine/generation-request.js';
export { InferenceEngine } from './engine/inference-engine.js';
export type {
  EmbeddingRequest,
  EmbeddingResult,
  PoolingContext,
  PoolingPassRequest,
  PoolingPassResult,
} from './engine/pooling.js';
export type { ReadinessDetails } from './engine/readiness-details.js';
export type { ReplicaLoad, ReplicaReport, ReportedReplica } from './engine/replica-report.js';
export { EngineKind, type EngineKindOptions, type EngineKindProvider } from './engines/engine-kind.js';
export { GatewayError, type FailureKind, type GatewayErrorOptions } from './errors/gateway-error.js';
export { GenerationRouteMetadata } from './http/routes/generation-route-metadata.js';
export { GenerationHook, type GenerationOutcome, type ObservedRequest } from './observability/generation-hook.js';
export type { GenerationTelemetry, LifecycleSignal } from './observability/generation-telemetry.js';
export { GantryMetrics } from './observability/metrics/gantry-metrics.js';
