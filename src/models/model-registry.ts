import type { ModelApi } from '../config/model-apis.js';
import { modelServes, servedApis } from './served-apis.js';
import type { AdmissionLimits } from '../admission/admission-queue.js';
import { LocalAdmission } from '../admission/local-admission.js';
import type { AdmissionCoordinator, ModelAdmission } from '../admission/model-admission.js';
import { canonicalJson } from '../config/config-changes.js';
import type { ModelConfig } from '../config/model-config.js';
import { hasDispatchGate } from '../engine/dispatch-gate.js';
import type { InferenceEngine } from '../engine/inference-engine.js';
import { GatewayError } from '../errors/gateway-error.js';
import { startEngine, type EngineFactory } from './engine-start.js';
import { EngineSlot } from './engine-slot.js';

/** The keys of a model entry that only its admission, request limits and start read, not its engine. */
const ADMISSION_KEYS = new Set([
  'maxConcurrency',
  'maxQueue',
  'queueTimeoutMs',
  'queueOrder',
  'maxTokensLimit',
  'apis',
  'startTimeoutMs',
]);

/** Which models a caller may use (a tenant's `models`). */
export interface ModelAccess {
  canUse(model: string): boolean;
}

export type { EngineFactory };

/** What a reload changed, by model name. */
export interface ModelChanges {
  added: string[];
  changed: string[];
  removed: string[];
}

/**
 * A configured model at run time: its configuration, engine and admission. A request resolves it
 * once and keeps it to its end, so a reload never moves a request to another engine.
 */
export class ModelRuntime {
  constructor(
    readonly config: ModelConfig,
    readonly slot: EngineSlot,
    readonly admission: ModelAdmission,
  ) {}

  get engine(): InferenceEngine {
    return this.slot.engine;
  }

  /** Whether the model serves the API (its `apis`, or what its engine can serve). */
  serves(api: ModelApi): boolean {
    return modelServes(this.config, this.slot.engine, api);
  }

  /** The APIs the model serves, for `/v1/models`. */
  get apis(): ModelApi[] {
    return servedApis(this.config, this.slot.engine);
  }

  /** Counts one accepted request on this engine until the returned function is called. */
  hold(): () => void {
    return this.slot.hold();
  }
}

/** The admission limits of a model entry; without `maxConcurrency`, its engine's own limit (none by default). */
export function admissionLimitsOf(
  config: ModelConfig,
  engineMaxConcurrency = Number.POSITIVE_INFINITY,
): AdmissionLimits {
  return {
    maxConcurrency: config.maxConcurrency ?? engineMaxConcurrency,
    maxQueue: config.maxQueue,
    queueTimeoutMs: config.queueTimeoutMs,
    order: config.queueOrder,
  };
}

/**
 * The models this gateway serves, by the name clients send. `apply` swaps in a reloaded list:
 * new requests see it at once, requests already accepted finish on the runtime they resolved, and
 * an engine no longer configured closes when its last request ends. A model keeps one admission
 * across reloads (its limits updated), so the requests still running on a replaced engine count
 * against the new limits too.
 */
export class ModelRegistry {
  private byName = new Map<string, ModelRuntime>();
  private readonly admissions = new Map<string, ModelAdmission>();
  /** Every engine not yet closed, retired ones included, with its model's name: all are closed at shutdown. */
  private readonly open = new Map<EngineSlot, string>();
  private applying: Promise<unknown> = Promise.resolve();
  private readonly closeListeners: Array<(model: string, engine: InferenceEngine) => void> = [];

  constructor(
    models: ReadonlyArray<{ config: ModelConfig; engine: InferenceEngine }>,
    private readonly coordinator: AdmissionCoordinator = new LocalAdmission(),
  ) {
    for (const { config, engine } of models)
      this.byName.set(config.name, this.runtime(config, this.slotOf(engine, config.name)));
  }

  /**
   * The model named `name`, or a 404 in the client's protocol. `access` narrows what the caller
   * may see: a model it may not use is answered as one that does not exist (as OpenAI answers for
   * a model a key cannot see), so nobody learns the names of models kept from them.
   */
  resolve(name: string, access?: ModelAccess): ModelRuntime {
    const model = this.byName.get(name);
    if (model && (access === undefined || access.canUse(name))) return model;
    throw new GatewayError('not_found', `The model '${name}' does not exist on this gateway.`, {
      param: 'model',
      code: 'model_not_found',
    });
  }

  list(): ModelRuntime[] {
    return [...this.byName.values()];
  }

  /** Engines still open: the configured ones and those replaced but still finishing requests. */
  get openEngines(): number {
    return this.open.size;
  }

  /**
   * Every engine not yet closed, by its model's name: those serving, and those a reload replaced
   * that still finish requests (their counts still move: /metrics adds them up).
   */
  openEnginesByModel(): Array<{ model: string; engine: InferenceEngine }> {
    return [...this.open].map(([slot, model]) => ({ model, engine: slot.engine }));
  }

  /** Calls `listener` with each engine once it has closed (its final counts are readable then). */
  onEngineClosed(listener: (model: string, engine: InferenceEngine) => void): void {
    this.closeListeners.push(listener);
  }

  /**
   * Serves `models` from now on. The engines of new and changed entries are built first; if one
   * fails, the ones built are closed, nothing changes and the error is thrown. An entry whose
   * engine keys did not change keeps its engine (a new `maxConcurrency` reloads no model).
   * Calls run one after another.
   */
  apply(models: readonly ModelConfig[], createEngine: EngineFactory): Promise<ModelChanges> {
    const applied = this.applying.then(() => this.applyNow(models, createEngine));
    this.applying = applied.catch(() => undefined);
    return applied;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.open.keys()].map((slot) => slot.close()));
  }

  private async applyNow(models: readonly ModelConfig[], createEngine: EngineFactory): Promise<ModelChanges> {
    const built = new Map<string, EngineSlot>();
    try {
      for (const config of models) {
        const current = this.byName.get(config.name);
        if (current && sameEngineKeys(current.config, config)) continue;
        built.set(config.name, this.slotOf(await startEngine(createEngine, config), config.name));
      }
    } catch (error) {
      await Promise.allSettled([...built.values()].map((slot) => slot.close()));
      throw error;
    }

    const changes: ModelChanges = { added: [], changed: [], removed: [] };
    const next = new Map<string, ModelRuntime>();
    for (const config of models) {
      const current = this.byName.get(config.name);
      if (current && canonicalJson(current.config) === canonicalJson(config)) {
        next.set(config.name, current);
        continue;
      }
      next.set(config.name, this.runtime(config, built.get(config.name) ?? current!.slot));
      (current ? changes.changed : changes.added).push(config.name);
    }
    for (const [name, runtime] of this.byName) {
      if (!next.has(name)) {
        changes.removed.push(name);
        this.admissions.delete(name);
      }
      if (next.get(name)?.slot !== runtime.slot) runtime.slot.retire();
    }
    this.byName = next;
    return changes;
  }

  /** A runtime on `slot`; the model's admission is kept across reloads, with the entry's limits. */
  private runtime(config: ModelConfig, slot: EngineSlot): ModelRuntime {
    const limits = admissionLimitsOf(config, slot.engine.defaultMaxConcurrency);
    let admission = this.admissions.get(config.name);
    if (admission) {
      admission.setLimits(limits);
    } else {
      admission = this.coordinator.admissionFor(config.name, limits);
      this.admissions.set(config.name, admission);
    }
    // The engine's word on room (an HTTP model's saturation) gates its admission; a new engine brings its own.
    admission.setGate?.(hasDispatchGate(slot.engine) ? slot.engine.dispatchGate() : undefined);
    return new ModelRuntime(config, slot, admission);
  }

  private slotOf(engine: InferenceEngine, model: string): EngineSlot {
    const slot = new EngineSlot(engine, (closed) => {
      this.open.delete(closed);
      for (const listener of this.closeListeners) listener(model, engine);
    });
    this.open.set(slot, model);
    return slot;
  }
}

/** Whether two entries of one model would build the same engine (they differ in admission keys at most). */
function sameEngineKeys(a: ModelConfig, b: ModelConfig): boolean {
  const engineKeys = (config: ModelConfig) =>
    Object.fromEntries(Object.entries(config).filter(([key]) => !ADMISSION_KEYS.has(key)));
  return canonicalJson(engineKeys(a)) === canonicalJson(engineKeys(b));
}
