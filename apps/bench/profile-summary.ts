/**
 * Reads what `npm run bench -- --profile cpu|heap|gc` wrote and prints it by area (profile-areas.ts):
 *
 *   node dist/apps/bench/profile-summary.js [--top N] [--skip-ms MS] FILE...
 *
 * `.cpuprofile`: self time by area and the top functions; `.heapprofile`: bytes by area;
 * `.gc.log`: the GC trace's totals. Several files side by side (a gateway's and the bare proxy's)
 * show where a ratio between them comes from.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import {
  summarizeCpuProfile,
  summarizeGcTrace,
  summarizeHeapProfile,
  type CpuProfile,
  type HeapProfileNode,
} from './profile-areas.js';
import { renderTable } from './text-table.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '20' }, 'skip-ms': { type: 'string', default: '0' } },
});
const top = Number(values.top);
const skipMs = Number(values['skip-ms']);
if (positionals.length === 0 || !Number.isInteger(top) || !(skipMs >= 0)) {
  process.stderr.write('Usage: node dist/apps/bench/profile-summary.js [--top N] [--skip-ms MS] FILE...\n');
  process.exit(2);
}

const percent = (share: number) => `${(share * 100).toFixed(1)}%`;
for (const file of positionals) {
  const text = readFileSync(file, 'utf8');
  process.stdout.write(`\n${basename(file)}\n`);
  if (file.endsWith('.gc.log')) {
    const gc = summarizeGcTrace(text);
    process.stdout.write(
      `${renderTable(
        ['scavenges', 'mark-compacts', 'pause ms', 'helper scavenge ms', 'allocated MB', 'survived MB', 'promoted MB'],
        [
          [
            gc.scavenges,
            gc.markCompacts,
            gc.pauseMs,
            gc.backgroundScavengeMs,
            gc.allocatedMb,
            gc.survivedMb,
            gc.promotedMb,
          ],
        ],
      )}\n`,
    );
  } else if (file.endsWith('.heapprofile')) {
    const areas = summarizeHeapProfile((JSON.parse(text) as { head: HeapProfileNode }).head);
    const total = areas.reduce((sum, area) => sum + area.bytes, 0);
    process.stdout.write(
      `${renderTable(
        ['area', 'KB', 'share'],
        areas.slice(0, top).map((area) => [area.name, area.bytes / 1024, percent(area.bytes / total)]),
      )}\n`,
    );
  } else {
    const summary = summarizeCpuProfile(JSON.parse(text) as CpuProfile, skipMs);
    process.stdout.write(`busy ${summary.busyMs.toFixed(0)} ms\n`);
    process.stdout.write(
      `${renderTable(
        ['area', 'self ms', 'share'],
        summary.areas.slice(0, top).map((area) => [area.name, area.ms, percent(area.share)]),
      )}\n\n`,
    );
    process.stdout.write(
      `${renderTable(
        ['function', 'self ms', 'share'],
        summary.functions.slice(0, top).map((fn) => [fn.name.slice(0, 100), fn.ms, percent(fn.share)]),
      )}\n`,
    );
  }
}
