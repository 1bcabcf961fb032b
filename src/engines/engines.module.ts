import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { EngineKinds } from './engine-kinds.js';
import { HttpEngineKind } from './http/http-engine-kind.js';
import { LlamaEngineKind } from './llama/llama-engine-kind.js';
import { StubEngineKind } from './stub/stub-engine-kind.js';

/** Gantry's own engine kinds, providers like any plugin's. */
export const BUILT_IN_ENGINE_KINDS = [StubEngineKind, HttpEngineKind, LlamaEngineKind] as const;

/** The built-in engine kinds and `EngineKinds`, which finds them with every plugin's. */
@Module({
  imports: [DiscoveryModule],
  providers: [...BUILT_IN_ENGINE_KINDS, EngineKinds],
  exports: [EngineKinds],
})
export class EnginesModule {}
