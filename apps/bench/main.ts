import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseBenchOptions, USAGE } from './bench-options.js';
import { FULL_PAIRED_SET, QUICK_PAIRED_SET, renderPairedSet, runPairedSet } from './paired-set.js';
import { openFileSoftLimit } from './proc-stats.js';
import { renderReport } from './report.js';
import { runBench } from './run-bench.js';
import { checkTargets } from './targets.js';

/** The repository root: this file runs as dist/apps/bench/main.js. */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

async function main(): Promise<number> {
  let options;
  try {
    options = parseBenchOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (options === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (options.ab !== undefined) return pairedAb(options.ab, options.profile.name === 'quick', options.outDir);
  if (options.scenarios.includes('idle')) {
    // Through the HTTP engine each idle stream holds two sockets in the gateway.
    const needed = 2 * options.profile.idle.streams + 256;
    const limit = openFileSoftLimit();
    if (limit !== undefined && limit < needed) {
      process.stderr.write(
        `The open-file limit is ${limit}; the idle scenario needs ${needed}. Run it through \`npm run bench\` (which raises it), ` +
          `raise it with \`ulimit -n ${needed}\`, or pass a smaller --idle-streams.\n`,
      );
      return 2;
    }
  }

  const results = await runBench(options, ROOT, (line) => process.stderr.write(`[bench] ${line}\n`));
  const targets = checkTargets(results);
  process.stdout.write(`${renderReport(results, targets)}\n`);
  const outDir = resolve(options.outDir);
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `bench-${results.startedAt.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify({ ...results, targets }, null, 2)}\n`);
  process.stdout.write(`\nJSON report: ${file}\n`);
  return 0;
}

/** `--ab DIR`: the paired A/B of the build in DIR (before) against this checkout (after). */
async function pairedAb(other: string, quick: boolean, outDir: string): Promise<number> {
  const before = resolve(other);
  if (!existsSync(join(before, 'dist/src/bootstrap.js'))) {
    process.stderr.write(
      `${before} holds no built Gantry (dist/): check it out, link its node_modules, and run \`npm run build\` there.\n`,
    );
    return 2;
  }
  const startedAt = new Date().toISOString();
  const rows = await runPairedSet(before, ROOT, quick ? QUICK_PAIRED_SET : FULL_PAIRED_SET, (line) =>
    process.stderr.write(`[bench] ${line}\n`),
  );
  process.stdout.write(`${renderPairedSet(rows, before, ROOT)}\n`);
  mkdirSync(resolve(outDir), { recursive: true });
  const file = join(resolve(outDir), `ab-${startedAt.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify({ startedAt, before, after: ROOT, rows }, null, 2)}\n`);
  process.stdout.write(`\nJSON report: ${file}\n`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`The benchmark failed: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  },
);
