import { Inject, Injectable } from '@nestjs/common';
import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import { GatewayConfig } from '../config/gateway-config.js';
import { GatewayError } from '../errors/gateway-error.js';

/** After the drain deadline, how long the error frames of the streams cut then may take to leave. */
const FLUSH_GRACE_MS = 2_000;

/** What `drain` needs of the HTTP server: to stop accepting connections. */
export interface ClosableServer {
  close(): unknown;
}

/**
 * The gateway's shutdown state, read by readiness checks (`isDraining`) and by the guard that
 * refuses new requests while draining. A drain stops accepting connections, lets the exchanges
 * in flight finish for up to `shutdown.drainMs`, then fails the streams still open with
 * `unavailable`, which each encoder writes as its protocol's in-band error frame.
 *
 * An exchange is in flight from `enter()` until its response has closed (finished or hung up), so
 * a drain also waits for the last frames to be handed to the socket.
 */
@Injectable()
export class LifecycleService {
  private draining = false;
  private cutOff = false;
  private inFlightCount = 0;
  /**
   * What ends each open stream at the drain deadline. A Set, not a Subject: a subscriber per
   * stream held a subscription and its finalizer array for the stream's life, and leaving a
   * Subject is a search of its observers.
   */
  private readonly cutters = new Set<() => void>();
  private idleWaiters: Array<() => void> = [];

  constructor(@Inject(GatewayConfig) private readonly config: GatewayConfig) {}

  /** True from the start of a drain: not ready, new requests are refused with 503. */
  get isDraining(): boolean {
    return this.draining;
  }

  /** Exchanges (streams and JSON answers) whose response has not closed yet. */
  get inFlight(): number {
    return this.inFlightCount;
  }

  /** Counts one exchange in flight; call the returned function (idempotent) when its response closes. */
  enter(): () => void {
    this.inFlightCount += 1;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.inFlightCount -= 1;
      if (this.inFlightCount === 0) this.wakeIdleWaiters();
    };
  }

  /** Fails the source with `unavailable` when the drain deadline passes (at once if it has). */
  endAtDrainDeadline<T>(): MonoTypeOperatorFunction<T> {
    return (source) =>
      new Observable<T>((subscriber) => {
        const cut = () =>
          subscriber.error(new GatewayError('unavailable', 'Gantry is shutting down.', { code: 'shutting_down' }));
        if (this.cutOff) {
          cut();
          return undefined;
        }
        this.cutters.add(cut);
        const inner = source.subscribe(subscriber);
        return () => {
          this.cutters.delete(cut);
          inner.unsubscribe();
        };
      });
  }

  /** Marks the gateway as draining (not ready; new requests get 503). */
  beginDrain(): void {
    this.draining = true;
  }

  /** Ends every open stream now, with the protocol's error frame. */
  endStreamsNow(): void {
    this.draining = true;
    if (this.cutOff) return;
    this.cutOff = true;
    for (const cut of [...this.cutters]) cut();
  }

  /**
   * The graceful half of a shutdown: stop accepting connections (Node also closes the idle
   * keep-alive ones), wait up to `shutdown.drainMs` for the exchanges in flight, then cut the
   * rest and give their error frames a moment to leave. The caller closes the app afterwards.
   */
  async drain(server: ClosableServer): Promise<void> {
    this.beginDrain();
    server.close();
    if (await this.whenIdle(this.config.shutdown.drainMs)) return;
    this.endStreamsNow();
    await this.whenIdle(FLUSH_GRACE_MS);
  }

  /** Resolves true once nothing is in flight, or false after `timeoutMs`. */
  private whenIdle(timeoutMs: number): Promise<boolean> {
    if (this.inFlightCount === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.idleWaiters = this.idleWaiters.filter((other) => other !== waiter);
        resolve(false);
      }, timeoutMs);
      this.idleWaiters.push(waiter);
    });
  }

  private wakeIdleWaiters(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const waiter of waiters) waiter();
  }
}
