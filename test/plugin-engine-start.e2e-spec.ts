import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { logLinesOf, startCli, writeConfig, type CliProcess } from './support/cli-process.js';
import { eventually } from './support/gateway.js';

const ROOT = join(import.meta.dirname, '..');
const started: CliProcess[] = [];

afterAll(() => {
  for (const cli of started)
    if (cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill('SIGKILL');
});

/** The CLI, killed after the tests if it is still running. */
function gantry(args: string[]): CliProcess {
  const cli = startCli(args);
  started.push(cli);
  return cli;
}

/**
 * A plugin whose engine kind `never` creates nothing: its `create()` returns a promise that never
 * settles. It imports Gantry's public entry from the build, as the gateway runs it.
 */
function neverPlugin(): string {
  const folder = mkdtempSync(join(tmpdir(), 'gantry-never-plugin-'));
  symlinkSync(join(ROOT, 'node_modules'), join(folder, 'node_modules'), 'dir');
  writeFileSync(
    join(folder, 'never-plugin.mjs'),
    `import { Module } from '@nestjs/common';
import { EngineKind } from ${JSON.stringify(join(ROOT, 'dist', 'src', 'index.js'))};
export class NeverKind { create() { return new Promise(() => {}); } }
EngineKind('never')(NeverKind);
export default class NeverPlugin {}
Module({ providers: [NeverKind] })(NeverPlugin);
`,
  );
  return join(folder, 'never-plugin.mjs');
}

const PLUGIN = neverPlugin();
const REFUSAL =
  "The engine of model 'stuck' could not start: the engine kind 'never' did not create it within 300 ms (models[].startTimeoutMs)";

describe('an engine kind whose create() never settles (models[].startTimeoutMs)', () => {
  it('refuses the start of one process and of two workers non-zero, naming the model and the kind; neither hangs', async () => {
    const file = (workers: number) =>
      writeConfig(
        `server: { workers: ${workers} }\nplugins: [${JSON.stringify(PLUGIN)}]\n` +
          'models:\n  - { name: fine, engine: stub }\n  - { name: stuck, engine: never, startTimeoutMs: 300 }\n',
      );
    const [single, cluster] = [
      gantry(['--config', file(1), '--port', '0']),
      gantry(['--config', file(2), '--port', '0']),
    ];
    expect(await single.exited).toBe(1);
    expect(single.output().stderr).toBe(`Gantry failed to start: ${REFUSAL}\n`);
    expect(await cluster.exited).toBe(1);
    // Said once, by the primary, for the instance.
    expect(cluster.output().stderr).toBe(`${REFUSAL}\n`);
    expect(cluster.output().stdout).not.toContain('Gantry listening');
  }, 60_000);

  it('refuses a reload that adds such a model, logged, the running models serving; the next reload applies', async () => {
    const fine = `plugins: [${JSON.stringify(PLUGIN)}]\nmodels:\n  - { name: fine, engine: stub }\n`;
    const file = writeConfig(fine);
    const cli = gantry(['--config', file, '--port', '0']);
    const url = await cli.listening;
    const logged = (start: string) => logLinesOf(cli.output().stdout).filter((line) => line.msg.startsWith(start));

    writeFileSync(file, `${fine}  - { name: stuck, engine: never, startTimeoutMs: 300 }\n`);
    cli.child.kill('SIGHUP');
    expect(await eventually(() => logged('Configuration reload refused').length === 1, 10_000)).toBe(true);
    expect(logged('Configuration reload refused')[0]).toMatchObject({
      level: 50,
      msg: `Configuration reload refused; the running configuration stays. ${REFUSAL}`,
    });

    writeFileSync(file, `${fine}  - { name: added, engine: stub }\n`);
    cli.child.kill('SIGHUP');
    expect(await eventually(() => logged('Configuration reloaded').length === 1, 10_000)).toBe(true);
    const models = (await (await fetch(`${url}/v1/models`)).json()) as { data: Array<{ id: string }> };
    expect(models.data.map((model) => model.id)).toEqual(['fine', 'added']);
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
  }, 60_000);
});
