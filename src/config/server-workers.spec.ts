import { describe, expect, it } from 'vitest';
import { configProblemsOf, parseWithBuiltInKinds as parseConfig } from '../../test/support/config-problems.js';
import { workerCount } from './server-config.js';

describe('server.workers', () => {
  it('is one process by default, a number, or auto (one per available core)', () => {
    expect(parseConfig({}).server.workers).toBe(1);
    expect(workerCount(parseConfig({ server: { workers: 3 } }).server)).toBe(3);
    expect(workerCount(parseConfig({ server: { workers: 'auto' } }).server, 6)).toBe(6);
    expect(workerCount({ workers: 'auto' }, 1)).toBe(1);
  });

  it('names a count that is neither auto nor an integer from 1 to 256', () => {
    for (const workers of [0, -1, 1.5, 'all', 257]) {
      expect(configProblemsOf({ server: { workers } })).toEqual([
        'server.workers must be "auto" or an integer from 1 to 256',
      ]);
    }
  });

  it('refuses a llama model with more than one worker, saying why and what to do instead', () => {
    const llama = { name: 'local', engine: 'llama', modelPath: './m.gguf', threads: 1 };
    expect(parseConfig({ server: { workers: 1 }, models: [llama] }).models).toHaveLength(1);
    const problems = configProblemsOf({ server: { workers: 2 }, models: [{ name: 'stub', engine: 'stub' }, llama] });
    expect(problems).toEqual([
      "models: 'local' runs on the llama engine, which loads the model into each worker process: with server.workers 2 it would be " +
        'loaded 2 times. Serve llama models with server.workers: 1, or from a server of their own as an http model.',
    ]);
  });

  it('takes every response store with workers, the memory one (the default) included: the primary keeps it for the instance', () => {
    expect(parseConfig({ server: { workers: 'auto' } }).responses.store).toBe('memory');
    expect(parseConfig({ server: { workers: 2 }, responses: { store: 'off' } }).responses.store).toBe('off');
  });
});
