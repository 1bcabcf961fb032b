import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.spec.ts', 'apps/**/*.spec.ts', 'examples/**/*.spec.ts', 'test/**/*.e2e-spec.ts'],
    reporters: ['default', './test/support/plain-summary-reporter.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    setupFiles: ['reflect-metadata'],
  },
});
