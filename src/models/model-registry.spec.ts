import { NEVER, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { parseWithBuiltInKinds } from '../../test/support/config-problems.js';
import type { ModelConfig } from '../config/model-config.js';
import type { EngineEvent } from '../engine/engine-event.js';
import { InferenceEngine } from '../engine/inference-engine.js';
import { ModelRegistry } from './model-registry.js';

/** An engine that records when it is closed; its generations never end. */
class TracedEngine extends InferenceEngine {
  closed = false;
  constructor(readonly label: string) {
    super();
  }
  generate(): Observable<EngineEvent> {
    return NEVER;
  }
  override async close(): Promise<void> {
    this.closed = true;
  }
}

/** Model entries as a configuration file would give them. */
function models(...entries: Array<Record<string, unknown>>): ModelConfig[] {
  return parseWithBuiltInKinds({ models: entries.map((entry) => ({ engine: 'stub', ...entry })) }).models;
}

/** A registry whose engines are TracedEngines labelled `name#n` (n: how many the factory built). */
function registryOf(entries: ModelConfig[]) {
  const built: TracedEngine[] = [];
  const factory = async (config: ModelConfig) => {
    const engine = new TracedEngine(`${config.name}#${built.length + 1}`);
    built.push(engine);
    return engine;
  };
  const registry = new ModelRegistry(
    entries.map((config) => ({ config, engine: new TracedEngine(`${config.name}#0`) })),
  );
  const engineOf = (name: string) => registry.resolve(name).engine as TracedEngine;
  return { registry, factory, built, engineOf };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('ModelRegistry.apply (a reloaded configuration)', () => {
  it('adds, changes and removes models for the lookups that follow, and reports which', async () => {
    const { registry, factory, engineOf } = registryOf(
      models({ name: 'kept' }, { name: 'changed' }, { name: 'removed' }),
    );
    const kept = engineOf('kept');

    const changes = await registry.apply(
      models({ name: 'kept' }, { name: 'changed', prefillMs: 5 }, { name: 'added' }),
      factory,
    );

    expect(changes).toEqual({ added: ['added'], changed: ['changed'], removed: ['removed'] });
    expect(registry.list().map((model) => model.config.name)).toEqual(['kept', 'changed', 'added']);
    expect(engineOf('kept')).toBe(kept);
    expect(engineOf('changed').label).toBe('changed#1');
    expect(engineOf('added').label).toBe('added#2');
    expect(() => registry.resolve('removed')).toThrow(/does not exist/);
  });

  it('closes an engine no longer used at once, and a replaced engine in use when its last request ends', async () => {
    const { registry, factory, engineOf } = registryOf(models({ name: 'busy' }, { name: 'idle' }));
    const busy = engineOf('busy');
    const idle = engineOf('idle');
    const first = registry.resolve('busy').hold();
    const second = registry.resolve('busy').hold();

    await registry.apply(models({ name: 'busy', tokenIntervalMs: 1 }), factory);
    await settle();
    expect(idle.closed).toBe(true);
    expect(busy.closed).toBe(false);
    expect(registry.openEngines).toBe(2);

    first();
    first();
    await settle();
    expect(busy.closed).toBe(false);
    second();
    await settle();
    expect(busy.closed).toBe(true);
    expect(registry.openEngines).toBe(1);
  });

  it('keeps the engine and the admission of a model whose admission limits alone changed, with the new limits', async () => {
    const { registry, factory, built, engineOf } = registryOf(models({ name: 'm', maxConcurrency: 1 }));
    const engine = engineOf('m');
    const admission = registry.resolve('m').admission;
    const running = (await admission.reserve('m')).run(NEVER).subscribe();
    const waiting = (await admission.reserve('m')).run(NEVER).subscribe();
    expect([admission.running, admission.queued]).toEqual([1, 1]);

    const changes = await registry.apply(models({ name: 'm', maxConcurrency: 2, maxQueue: 3 }), factory);

    expect(changes.changed).toEqual(['m']);
    expect(built).toHaveLength(0);
    expect(engineOf('m')).toBe(engine);
    expect(registry.resolve('m').admission).toBe(admission);
    expect(admission.limits).toMatchObject({ maxConcurrency: 2, maxQueue: 3 });
    // The new room admits the one that waited.
    expect([admission.running, admission.queued]).toEqual([2, 0]);
    running.unsubscribe();
    waiting.unsubscribe();
  });

  it('treats an entry that differs only in key order as unchanged', async () => {
    const { registry, factory } = registryOf(models({ name: 'm', prefillMs: 1, tokenIntervalMs: 2 }));
    const changes = await registry.apply(models({ tokenIntervalMs: 2, name: 'm', prefillMs: 1 }), factory);
    expect(changes).toEqual({ added: [], changed: [], removed: [] });
  });

  it('changes nothing when an engine cannot start, and closes the engines it had built for that reload', async () => {
    const { registry, engineOf } = registryOf(models({ name: 'old' }));
    const old = engineOf('old');
    const started: TracedEngine[] = [];
    const failing = async (config: ModelConfig) => {
      if (config.name === 'broken') throw new Error('no such file: ./missing.gguf');
      const engine = new TracedEngine(config.name);
      started.push(engine);
      return engine;
    };

    await expect(registry.apply(models({ name: 'fresh' }, { name: 'broken' }), failing)).rejects.toThrow(
      "The engine of model 'broken' could not start: no such file: ./missing.gguf",
    );

    expect(registry.list().map((model) => model.config.name)).toEqual(['old']);
    expect(engineOf('old')).toBe(old);
    expect(old.closed).toBe(false);
    expect(started.map((engine) => engine.closed)).toEqual([true]);
  });

  it('refuses an engine whose kind does not create it within startTimeoutMs, naming the model and the kind; later reloads still apply, and an engine that comes late is closed', async () => {
    const { registry, factory, engineOf } = registryOf(models({ name: 'old' }));
    let resolveLate: (engine: TracedEngine) => void = () => undefined;
    const late = new TracedEngine('late');
    const hanging = (config: ModelConfig) =>
      config.name === 'stuck' ? new Promise<TracedEngine>((resolve) => (resolveLate = resolve)) : factory(config);

    await expect(registry.apply(models({ name: 'stuck', startTimeoutMs: 30 }), hanging)).rejects.toThrow(
      "The engine of model 'stuck' could not start: the engine kind 'stub' did not create it within 30 ms (models[].startTimeoutMs)",
    );
    expect(registry.list().map((model) => model.config.name)).toEqual(['old']);

    // Not wedged: the next reload applies.
    expect(await registry.apply(models({ name: 'old' }, { name: 'fresh' }), factory)).toEqual({
      added: ['fresh'],
      changed: [],
      removed: [],
    });
    expect(engineOf('fresh').label).toBe('fresh#1');
    resolveLate(late);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(late.closed).toBe(true);
  });

  it('does not rebuild an engine for a new startTimeoutMs', async () => {
    const { registry, factory, engineOf } = registryOf(models({ name: 'm' }));
    const engine = engineOf('m');
    expect(await registry.apply(models({ name: 'm', startTimeoutMs: 1_000 }), factory)).toEqual({
      added: [],
      changed: ['m'],
      removed: [],
    });
    expect(engineOf('m')).toBe(engine);
  });

  it('applies one reload after the other', async () => {
    const { registry, factory } = registryOf(models({ name: 'a' }));
    const first = registry.apply(models({ name: 'a' }, { name: 'b' }), factory);
    const second = registry.apply(models({ name: 'b' }), factory);
    expect(await first).toEqual({ added: ['b'], changed: [], removed: [] });
    expect(await second).toEqual({ added: [], changed: [], removed: ['a'] });
  });

  it('closes every engine at shutdown, the replaced ones still in use included', async () => {
    const { registry, factory, engineOf } = registryOf(models({ name: 'm' }));
    const replaced = engineOf('m');
    registry.resolve('m').hold();
    await registry.apply(models({ name: 'm', prefillMs: 9 }), factory);
    await registry.close();
    expect(replaced.closed).toBe(true);
    expect(engineOf('m').closed).toBe(true);
    expect(registry.openEngines).toBe(0);
  });
});
