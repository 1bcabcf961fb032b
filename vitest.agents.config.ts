import { defineConfig } from 'vitest/config';

// `npm run test:agents`: only Codex CLI and Claude Code against a built gateway (`npm test` runs
// them too, with everything else).
export default defineConfig({
  test: {
    include: ['test/clients/agents/**/*.agent-spec.ts'],
    reporters: ['default', './test/support/plain-summary-reporter.ts'],
    testTimeout: 120_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
