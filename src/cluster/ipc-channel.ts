import { GatewayError, type FailureKind } from '../errors/gateway-error.js';

/** A failure as it crosses the channel: a GatewayError's fields, so that it arrives as one. */
export interface WireError {
  kind: FailureKind;
  message: string;
  code?: string;
  param?: string;
  retryAfterSeconds?: number;
}

/**
 * The messages between the primary and a worker, over Node's IPC channel (JSON). `gantry` marks
 * them as ours among whatever else the channel carries.
 */
export type ChannelMessage =
  | { gantry: 1; kind: 'call'; id: number; method: string; params: unknown }
  | { gantry: 1; kind: 'reply'; id: number; value?: unknown; error?: WireError }
  | { gantry: 1; kind: 'event'; type: string; params: unknown };

/** The channel is gone: the other process exited, or is exiting. */
export class ChannelClosedError extends GatewayError {
  constructor() {
    super('unavailable', 'This gateway instance is shutting down; retry shortly.', {
      code: 'shutting_down',
      retryAfterSeconds: 1,
    });
  }
}

/**
 * Calls (with replies) and events (without) over one IPC link, the same on both ends: the worker
 * talks to its primary through one, the primary to each worker through one. Handlers may answer
 * synchronously; their failures travel back as GatewayErrors.
 */
export class IpcChannel {
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private readonly handlers = new Map<string, (params: never) => unknown>();
  private readonly listeners = new Map<string, (params: never) => void>();
  private closed = false;

  /**
   * @param post sends one message; it throws when the link is gone.
   * @param onListenerError hears what an event listener threw (a call's handler answers with it instead).
   */
  constructor(
    private readonly post: (message: ChannelMessage) => void,
    private readonly onListenerError: (error: unknown, type: string) => void = () => undefined,
  ) {}

  /** Asks the other end; rejects with its error, or ChannelClosedError when the link goes. */
  call<T>(method: string, params: unknown = null): Promise<T> {
    if (this.closed) return Promise.reject(new ChannelClosedError());
    const id = (this.nextId += 1);
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      if (!this.send({ gantry: 1, kind: 'call', id, method, params })) {
        this.pending.delete(id);
        reject(new ChannelClosedError());
      }
    });
  }

  /** Tells the other end, expecting no answer; false when the link is gone. */
  notify(type: string, params: unknown = null): boolean {
    return !this.closed && this.send({ gantry: 1, kind: 'event', type, params });
  }

  /** Answers the other end's `method` calls. */
  handle<P>(method: string, handler: (params: P) => unknown): void {
    this.handlers.set(method, handler as (params: never) => unknown);
  }

  /** Listens to the other end's `type` events. */
  on<P>(type: string, listener: (params: P) => void): void {
    this.listeners.set(type, listener as (params: never) => void);
  }

  /** Feeds one message that came in; anything that is not ours is ignored. */
  receive(message: unknown): void {
    if (!isChannelMessage(message)) return;
    switch (message.kind) {
      case 'event':
        try {
          this.listeners.get(message.type)?.(message.params as never);
        } catch (error) {
          this.onListenerError(error, message.type);
        }
        return;
      case 'reply': {
        const waiting = this.pending.get(message.id);
        if (!waiting) return;
        this.pending.delete(message.id);
        if (message.error) waiting.reject(fromWire(message.error));
        else waiting.resolve(message.value);
        return;
      }
      case 'call':
        void this.answer(message.id, message.method, message.params);
    }
  }

  /** The link is gone: pending calls fail, later ones too. */
  close(): void {
    this.closed = true;
    for (const waiting of this.pending.values()) waiting.reject(new ChannelClosedError());
    this.pending.clear();
  }

  private async answer(id: number, method: string, params: unknown): Promise<void> {
    const handler = this.handlers.get(method);
    try {
      if (!handler) throw new GatewayError('internal', `No handler for '${method}' on this side of the channel.`);
      const value = await handler(params as never);
      this.send({ gantry: 1, kind: 'reply', id, value: value ?? null });
    } catch (error) {
      this.send({ gantry: 1, kind: 'reply', id, error: toWire(error) });
    }
  }

  private send(message: ChannelMessage): boolean {
    try {
      this.post(message);
      return true;
    } catch {
      this.close();
      return false;
    }
  }
}

function isChannelMessage(message: unknown): message is ChannelMessage {
  return typeof message === 'object' && message !== null && (message as { gantry?: unknown }).gantry === 1;
}

/** A failure as it crosses the channel (anything but a GatewayError travels as `internal`). */
export function toWire(error: unknown): WireError {
  if (error instanceof GatewayError) {
    return {
      kind: error.kind,
      message: error.message,
      code: error.code,
      param: error.param,
      retryAfterSeconds: error.retryAfterSeconds,
    };
  }
  return { kind: 'internal', message: (error as Error)?.message ?? String(error) };
}

/** A failure that crossed the channel, a GatewayError again. */
export function fromWire(error: WireError): GatewayError {
  return new GatewayError(error.kind, error.message, {
    code: error.code,
    param: error.param,
    retryAfterSeconds: error.retryAfterSeconds,
  });
}
