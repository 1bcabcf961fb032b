/**
 * An engine that can say whether the replicas behind it have room for one more request (the
 * HTTP engine under `saturation`): the model's admission consults it before it releases a request,
 * so that a request held for room waits in Gantry's fair queue, with keep-alives, rather than in
 * an engine's first-come first-served queue (docs/engines.md#saturation). Optional, so the port
 * itself names no replica.
 */
export interface DispatchGate {
  /**
   * Whether a request released now would find room. Asked once per release, just before the
   * request is handed to the engine (which counts it as sent at once), so a loop that releases
   * while this holds stops when the room it saw is used.
   */
  hasRoom(): boolean;
  /** Calls `listener` whenever room may have appeared (a fresh reading of the engines); returns its removal. */
  onRoom(listener: () => void): () => void;
}

/** An engine that offers a dispatch gate (undefined when its configuration holds nothing back). */
export interface GatedEngine {
  dispatchGate(): DispatchGate | undefined;
}

export function hasDispatchGate(engine: object): engine is GatedEngine {
  return typeof (engine as Partial<GatedEngine>).dispatchGate === 'function';
}
