import { describe, expect, it } from 'vitest';

describe('the public entry (src/index.ts, the package’s exports["."])', () => {
  it('exports what a plugin needs and nothing else', async () => {
    const entry = await import('./index.js');
    expect(Object.keys(entry).sort()).toEqual([
      'ContextLengthError',
      'EngineError',
      'EngineKind',
      'GantryMetrics',
      'GatewayError',
      'GenerationHook',
      'GenerationInterceptor',
      'InferenceEngine',
      'ModelConfigBase',
      'ZERO_USAGE',
      'countersOf',
      'isOutput',
      'makeTimings',
      'textOf',
    ]);
  });

  it('keeps GenerationInterceptor as the deprecated name of GenerationHook', async () => {
    const { GenerationHook, GenerationInterceptor } = await import('./index.js');
    expect(GenerationInterceptor).toBe(GenerationHook);
  });
});
