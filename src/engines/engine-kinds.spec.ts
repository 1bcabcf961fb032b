import { Module, Scope } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { IsString } from 'class-validator';
import { EMPTY, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config/config-error.js';
import { parseConfig } from '../config/config-loader.js';
import { ModelConfigBase } from '../config/model-config.js';
import type { EngineEvent } from '../engine/engine-event.js';
import { InferenceEngine } from '../engine/inference-engine.js';
import { EngineKind, type EngineKindProvider } from './engine-kind.js';
import { EngineKinds } from './engine-kinds.js';
import { EnginesModule } from './engines.module.js';
import { StubEngine } from './stub/stub-engine.js';

class EchoModelConfig extends ModelConfigBase {
  @IsString()
  greeting: string = 'hello';
}

/** An engine that keeps the entry it was made from. */
class EchoEngine extends InferenceEngine {
  constructor(readonly model: EchoModelConfig) {
    super();
  }
  generate(): Observable<EngineEvent> {
    return EMPTY;
  }
}

/** A plugin's kind. */
@EngineKind('echo', { config: EchoModelConfig })
class EchoEngineKind implements EngineKindProvider<EchoModelConfig> {
  create(model: EchoModelConfig): EchoEngine {
    return new EchoEngine(model);
  }
}

@Module({ providers: [EchoEngineKind] })
class EchoPluginModule {}

@EngineKind('stub')
class SecondStubKind {}

@EngineKind('scoped')
class ScopedKindBase {}
@Module({ providers: [{ provide: ScopedKindBase, useClass: ScopedKindBase, scope: Scope.REQUEST }] })
class ScopedPluginModule {}

async function kindsWith(...plugins: Array<new () => unknown>): Promise<EngineKinds> {
  const moduleRef = await Test.createTestingModule({ imports: [EnginesModule, ...plugins] }).compile();
  return moduleRef.get(EngineKinds);
}

const models = (...entries: Array<Record<string, unknown>>) => parseConfig({ models: entries });

describe('EngineKinds (every @EngineKind provider, found through Nest discovery)', () => {
  it('finds the built-in kinds as it finds a plugin’s, in import order', async () => {
    const kinds = await kindsWith(EchoPluginModule);
    expect(kinds.list().map((kind) => kind.name)).toEqual(['stub', 'http', 'llama', 'echo']);
    expect(kinds.list().find((kind) => kind.name === 'llama')?.singleProcess).toBe(true);
  });

  it('validates each entry by its kind’s config class and gives the kind the entry, its own keys and defaults included', async () => {
    const kinds = await kindsWith(EchoPluginModule);
    const [stub, echo] = kinds.parseModels(
      models({ name: 's', engine: 'stub', prefillMs: 5 }, { name: 'e', engine: 'echo' }),
      'test',
    );
    expect(stub).toMatchObject({ prefillMs: 5, tokenIntervalMs: 0 });
    expect(echo).toBeInstanceOf(EchoModelConfig);
    expect(await kinds.create(stub)).toBeInstanceOf(StubEngine);
    expect(((await kinds.create(echo)) as EchoEngine).model).toMatchObject({
      name: 'e',
      engine: 'echo',
      greeting: 'hello',
    });
  });

  it('refuses an unknown kind naming the known ones, and a key the kind does not have', async () => {
    const kinds = await kindsWith(EchoPluginModule);
    const problemsOf = (...entries: Array<Record<string, unknown>>) => {
      try {
        kinds.parseModels(models(...entries), 'test');
      } catch (error) {
        if (error instanceof ConfigError) return error.problems;
        throw error;
      }
      return [];
    };
    expect(problemsOf({ name: 'a', engine: 'gpt' })).toEqual([
      'models[0].engine must be one of: stub, http, llama, echo (got "gpt")',
    ]);
    expect(problemsOf({ name: 'a', engine: 'echo', greeting: 5, prefillMs: 1 })).toEqual([
      'models[0].prefillMs: unknown field (should not exist)',
      'models[0].greeting must be a string',
    ]);
    expect((await kindsWith()).list().map((kind) => kind.name)).toEqual(['stub', 'http', 'llama']);
  });

  it('refuses two providers of one kind name, and a request-scoped kind', async () => {
    @Module({ providers: [SecondStubKind] })
    class DuplicateModule {}
    await expect(kindsWith(DuplicateModule).then((kinds) => kinds.list())).rejects.toThrow(
      "Two providers are the engine kind 'stub'",
    );
    await expect(kindsWith(ScopedPluginModule).then((kinds) => kinds.list())).rejects.toThrow(
      "The engine kind 'scoped' (ScopedKindBase) is request-scoped or transient",
    );
  });
});
