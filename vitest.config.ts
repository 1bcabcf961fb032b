import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Agent specs run the coding agents' binaries against a built gateway (`npm test` builds first).
    include: [
      'src/**/*.spec.ts',
      'apps/**/*.spec.ts',
      'examples/**/*.spec.ts',
      'deploy/**/*.spec.ts',
      'docs/**/*.spec.ts',
      'test/**/*.e2e-spec.ts',
      'test/clients/agents/**/*.agent-spec.ts',
    ],
    reporters: ['default', './test/support/plain-summary-reporter.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    setupFiles: ['reflect-metadata'],
  },
});
