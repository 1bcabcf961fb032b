import { parseSync } from '@swc/core';
import { readFileSync } from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type * as Gantry from './index.js';

const RUNTIME_EXPORTS = [
  'ACCEPTED',
  'ContextLengthError',
  'EngineError',
  'EngineKind',
  'GantryMetrics',
  'GatewayError',
  'GenerationHook',
  'GenerationRouteMetadata',
  'InferenceEngine',
  'ModelConfigBase',
  'RESUMING',
  'ZERO_USAGE',
  'countersOf',
  'isOutput',
  'makeTimings',
  'textOf',
];

/** The exports that exist as types only (erased from the JavaScript). */
const TYPE_EXPORTS = [
  'AcceptedEvent',
  'AckEvent',
  'AnswerResume',
  'AssistantMessage',
  'ChatMessage',
  'CompletionPrompt',
  'ContentPart',
  'DoneEvent',
  'EmbeddingRequest',
  'EmbeddingResult',
  'EngineErrorKind',
  'EngineEvent',
  'EngineKindOptions',
  'EngineKindProvider',
  'FailureKind',
  'FinishReason',
  'GatewayErrorOptions',
  'GenerationOutcome',
  'GenerationRequest',
  'GenerationTelemetry',
  'LifecycleSignal',
  'ObservedRequest',
  'OutputCounters',
  'PoolingContext',
  'PoolingPassRequest',
  'PoolingPassResult',
  'ReadinessDetails',
  'ReasoningDelta',
  'ReplicaLoad',
  'ReplicaReport',
  'ReportedReplica',
  'ResumingEvent',
  'ResponseFormat',
  'SamplingParams',
  'SystemMessage',
  'TextDelta',
  'Timings',
  'TokenUsage',
  'ToolCall',
  'ToolCallDelta',
  'ToolChoice',
  'ToolDefinition',
  'ToolResultMessage',
  'UserMessage',
];

/** The names a declaration file exports, from its `export { … } from` lines (the entry has no other kind). */
function exportedNames(declarations: string): string[] {
  const names: string[] = [];
  for (const item of parseSync(declarations, { syntax: 'typescript' }).body) {
    if (!item.type.startsWith('Export')) continue;
    expect(item.type, 'the public entry re-exports by name only').toBe('ExportNamedDeclaration');
    if (item.type !== 'ExportNamedDeclaration') continue;
    for (const specifier of item.specifiers) {
      expect(specifier.type).toBe('ExportSpecifier');
      if (specifier.type === 'ExportSpecifier') names.push((specifier.exported ?? specifier.orig).value);
    }
  }
  return names.sort();
}

describe('the public entry (src/index.ts, the package’s exports["."])', () => {
  it('exports what a plugin needs and nothing else', async () => {
    const entry = await import('./index.js');
    expect(Object.keys(entry).sort()).toEqual(RUNTIME_EXPORTS);
  });

  it('declares the same values and every public type in the built dist/src/index.d.ts (what an installed package offers)', () => {
    // `npm test` builds first; after an edit of the entry, `npm run build` before running this alone.
    const declarations = readFileSync(new URL('../dist/src/index.d.ts', import.meta.url), 'utf8');
    expect(exportedNames(declarations)).toEqual([...RUNTIME_EXPORTS, ...TYPE_EXPORTS].sort());
  });

  it('names every public type as a plugin imports it (`npm run typecheck` fails when one goes)', () => {
    expectTypeOf<
      [
        Gantry.AcceptedEvent,
        Gantry.AckEvent,
        Gantry.AnswerResume,
        Gantry.AssistantMessage,
        Gantry.ChatMessage,
        Gantry.ContentPart,
        Gantry.DoneEvent,
        Gantry.EngineErrorKind,
        Gantry.EngineEvent,
        Gantry.EngineKindOptions,
        Gantry.EngineKindProvider,
        Gantry.FailureKind,
        Gantry.FinishReason,
        Gantry.GatewayErrorOptions,
        Gantry.GenerationOutcome,
        Gantry.GenerationRequest,
        Gantry.GenerationTelemetry,
        Gantry.LifecycleSignal,
        Gantry.ObservedRequest,
        Gantry.OutputCounters,
        Gantry.ReadinessDetails,
        Gantry.ReasoningDelta,
        Gantry.ReplicaLoad,
        Gantry.ReplicaReport,
        Gantry.ReportedReplica,
        Gantry.ResponseFormat,
        Gantry.SamplingParams,
        Gantry.SystemMessage,
        Gantry.TextDelta,
        Gantry.Timings,
        Gantry.TokenUsage,
        Gantry.ToolCall,
        Gantry.ToolCallDelta,
        Gantry.ToolChoice,
        Gantry.ToolDefinition,
        Gantry.ToolResultMessage,
        Gantry.UserMessage,
      ]
    >().not.toBeAny();
    expectTypeOf<Gantry.AcceptedEvent['type']>().toEqualTypeOf<'accepted'>();
    expectTypeOf<
      Parameters<NonNullable<Gantry.GenerationRequest['onResume']>>[0]
    >().toEqualTypeOf<Gantry.AnswerResume>();
  });
});
