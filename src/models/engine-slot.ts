import type { InferenceEngine } from '../engine/inference-engine.js';

/**
 * One engine and the accepted requests still using it. An engine a reload replaced or removed is
 * retired: new requests no longer reach it, and it closes when the last request on it ends.
 */
export class EngineSlot {
  private holds = 0;
  private retired = false;
  private closing?: Promise<void>;

  constructor(
    readonly engine: InferenceEngine,
    private readonly onClosed: (slot: EngineSlot) => void = () => undefined,
  ) {}

  /** Requests accepted on this engine and not yet ended. */
  get inUse(): number {
    return this.holds;
  }

  get isClosed(): boolean {
    return this.closing !== undefined;
  }

  /** Counts one request on the engine until the returned function (idempotent) is called. */
  hold(): () => void {
    this.holds += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds -= 1;
      if (this.retired && this.holds === 0) void this.close();
    };
  }

  /** No new request will reach the engine: it closes now if idle, else when its last request ends. */
  retire(): void {
    this.retired = true;
    if (this.holds === 0) void this.close();
  }

  /** Closes the engine (once), whatever still uses it: the gateway's shutdown. */
  close(): Promise<void> {
    this.closing ??= this.engine.close().then(
      () => this.onClosed(this),
      () => this.onClosed(this),
    );
    return this.closing;
  }
}
