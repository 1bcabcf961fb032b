import { Counter, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { GenerationHook } from './generation-hook.js';
import { HookFailures } from './hook-failures.js';

class NoisyHook extends GenerationHook {}
class QuietHook extends GenerationHook {}

describe('HookFailures', () => {
  it('counts every exception by hook and method, and logs at most once per interval per hook', async () => {
    const registry = new Registry();
    const hookErrors = new Counter({
      name: 'hook_errors',
      help: 'h',
      labelNames: ['hook', 'method'],
      registers: [registry],
    });
    const logged: string[] = [];
    const failures = new HookFailures({ hookErrors }, (message) => logged.push(message), 60_000);

    for (let index = 0; index < 5; index += 1) failures.report(new NoisyHook(), 'onEvent', new TypeError('boom'));
    failures.report(new NoisyHook(), 'onEnd', 'not an error');
    failures.report(new QuietHook(), 'onStart', new Error('once'));

    const values = (await hookErrors.get()).values.map(
      ({ labels, value }) => `${labels.hook}.${labels.method} ${value}`,
    );
    expect(values).toEqual(['NoisyHook.onEvent 5', 'NoisyHook.onEnd 1', 'QuietHook.onStart 1']);
    expect(logged).toEqual([
      'The GenerationHook NoisyHook threw in onEvent (TypeError: boom); the request went on, and gantry_hook_errors_total counts each.',
      'The GenerationHook QuietHook threw in onStart (Error: once); the request went on, and gantry_hook_errors_total counts each.',
    ]);
  });
});
