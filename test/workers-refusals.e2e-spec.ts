import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { logLinesOf, startCli, writeConfig } from './support/cli-process.js';
import { eventually, exchange, fromEveryWorker } from './support/cluster-exchange.js';

describe('server.workers with models the workers refuse (the primary knows no engine kind)', () => {
  it('a llama model is refused at start, saying why, once', async () => {
    const file = writeConfig(
      'server: { workers: 2 }\nmodels:\n  - { name: local, engine: llama, modelPath: ./m.gguf, threads: 1 }\n',
    );
    const cli = startCli(['--config', file, '--port', '0']);
    expect(await cli.exited).toBe(1);
    const { stderr } = cli.output();
    expect(stderr).toContain(
      "models: 'local' runs on the llama engine, which loads the model into each worker process",
    );
    expect(stderr.match(/Invalid configuration/g)).toHaveLength(1);
  }, 60_000);

  it('an unknown engine kind is refused at start, naming the kinds there are', async () => {
    const file = writeConfig(
      'server: { workers: 2 }\nmodels:\n  - { name: echo, engine: stub }\n  - { name: odd, engine: gpt }\n',
    );
    const cli = startCli(['--config', file, '--port', '0']);
    expect(await cli.exited).toBe(1);
    expect(cli.output().stderr.trim()).toBe(
      `Invalid configuration (${file}):\n  - models[1].engine must be one of: stub, http, llama (got "gpt")`,
    );
  }, 60_000);
});

/**
 * A plugin engine kind whose engine cannot start in the instance's second worker (as one needing
 * a device that process lacks): a reload that adds one of its models is refused there alone.
 */
function flakyKindPlugin(): string {
  const folder = mkdtempSync(join(tmpdir(), 'gantry-flaky-plugin-'));
  symlinkSync(join(import.meta.dirname, '..', 'node_modules'), join(folder, 'node_modules'), 'dir');
  const entry = JSON.stringify(join(import.meta.dirname, '..', 'dist', 'src', 'index.js'));
  writeFileSync(
    join(folder, 'flaky-kind.mjs'),
    `import cluster from 'node:cluster';
import { Module } from '@nestjs/common';
import { EMPTY } from 'rxjs';
import { EngineKind, InferenceEngine } from ${entry};
class QuietEngine extends InferenceEngine { generate() { return EMPTY; } }
export class FlakyKind {
  create() {
    if (cluster.worker?.id === 2) throw new Error('no device in this process');
    return new QuietEngine();
  }
}
EngineKind('flaky')(FlakyKind);
export default class FlakyPlugin {}
Module({ providers: [FlakyKind] })(FlakyPlugin);
`,
  );
  return join(folder, 'flaky-kind.mjs');
}

describe('a reload one worker refuses while the others apply it', () => {
  it('names the worker and replaces it, so that every worker serves the configuration the others applied', async () => {
    const config = `server: { workers: 2 }\nplugins: [${JSON.stringify(flakyKindPlugin())}]\nmodels:\n  - { name: echo, engine: stub }\n`;
    const file = writeConfig(config);
    const cli = startCli(['--config', file, '--port', '0']);
    try {
      const url = await cli.listening;
      const logs = () => logLinesOf(cli.output().stdout);
      writeFileSync(file, `${config}  - { name: odd, engine: flaky }\n`);
      cli.child.kill('SIGHUP');
      const refusal = (line: { level: number; msg: string }) =>
        line.level === 50 &&
        /^Worker \d+ refused the configuration the other workers applied; it is replaced by one that runs it\. The engine of model 'odd' could not start: no device in this process/.test(
          line.msg,
        );
      expect(await eventually(() => logs().some(refusal)), cli.output().stdout).toBe(true);
      // The worker started in its place runs the new models: both workers list them.
      const lists = (answer: Awaited<ReturnType<typeof exchange>>) =>
        answer.status === 200 &&
        (answer.json as { data: Array<{ id: string }> }).data.some((model) => model.id === 'odd');
      expect((await fromEveryWorker(url, '/v1/models', undefined, 2, lists)).done).toBe(true);
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    }
  }, 60_000);
});

describe('a SIGTERM while the workers start', () => {
  it('drains them as they come up: nothing is served, and the primary exits 0', async () => {
    const file = writeConfig(
      'server: { workers: 2 }\nshutdown: { drainMs: 500 }\nmodels:\n  - { name: echo, engine: stub }\n',
    );
    const cli = startCli(['--config', file, '--port', '0']);
    // Both workers forked, still loading the gateway (a drain sent now reaches no listener).
    const pid = cli.child.pid!;
    const forked = () => {
      try {
        return (
          readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).length >= 2
        );
      } catch {
        return false;
      }
    };
    expect(await eventually(forked, 15_000)).toBe(true);
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
    expect(cli.output().stdout).not.toContain('Gantry listening');
  }, 40_000);
});
