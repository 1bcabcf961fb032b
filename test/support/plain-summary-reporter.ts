import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends the run with the plain `N passed, N failed, N skipped` line that CI reads
 * (vitest's own summary is not parsed there).
 */
export default class PlainSummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const testModule of testModules) {
      for (const testCase of testModule.children.allTests()) {
        const state = testCase.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else skipped += 1;
      }
      // A file that failed to load has no test cases but must still count as a failure.
      if (testModule.state() === 'failed' && [...testModule.children.allTests()].length === 0) failed += 1;
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
