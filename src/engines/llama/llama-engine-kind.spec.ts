import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NODE_LLAMA_CPP_VERSION } from './llama-engine-kind.js';

describe('the llama engine kind', () => {
  it('names the node-llama-cpp version package.json pins, in the install line it gives when the package is missing', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'));
    expect(pkg.optionalDependencies['node-llama-cpp']).toBe(NODE_LLAMA_CPP_VERSION);
  });
});
