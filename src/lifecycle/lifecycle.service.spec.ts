import { NEVER, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/config-loader.js';
import { LifecycleService } from './lifecycle.service.js';

const lifecycleWith = (drainMs: number) => new LifecycleService(parseConfig({ shutdown: { drainMs } }));
const fakeServer = () => {
  const server = { closed: false, close: () => (server.closed = true) };
  return server;
};

describe('LifecycleService', () => {
  it('drains at once when nothing is in flight, closing the server and reporting draining', async () => {
    const lifecycle = lifecycleWith(10_000);
    const server = fakeServer();
    expect(lifecycle.isDraining).toBe(false);
    await lifecycle.drain(server);
    expect(server.closed).toBe(true);
    expect(lifecycle.isDraining).toBe(true);
  });

  it('waits for exchanges that finish within drainMs without cutting them', async () => {
    const lifecycle = lifecycleWith(5_000);
    const leave = lifecycle.enter();
    const source = new Subject<number>();
    let failure: unknown;
    source.pipe(lifecycle.endAtDrainDeadline()).subscribe({ error: (error) => (failure = error) });
    setTimeout(() => {
      source.complete();
      leave();
      leave();
    }, 30);
    const started = Date.now();
    await lifecycle.drain(fakeServer());
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(failure).toBeUndefined();
    expect(lifecycle.inFlight).toBe(0);
  });

  it('fails the streams still open at the deadline with unavailable, then waits for them to close', async () => {
    const lifecycle = lifecycleWith(50);
    const leave = lifecycle.enter();
    let failure: unknown;
    NEVER.pipe(lifecycle.endAtDrainDeadline()).subscribe({
      error: (error) => {
        failure = error;
        setTimeout(leave, 10);
      },
    });
    await lifecycle.drain(fakeServer());
    expect(failure).toMatchObject({ kind: 'unavailable', code: 'shutting_down', message: 'Gantry is shutting down.' });
    expect(lifecycle.inFlight).toBe(0);
    let late: unknown;
    NEVER.pipe(lifecycle.endAtDrainDeadline()).subscribe({ error: (error) => (late = error) });
    expect(late).toMatchObject({ kind: 'unavailable' });
  });
});
