import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..');
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  bin: Record<string, string>;
  dependencies: Record<string, string>;
  optionalDependencies: Record<string, string>;
};
const work = mkdtempSync(join(tmpdir(), 'gantry-package-'));
const running: ChildProcess[] = [];

afterAll(async () => {
  // npx runs gantry as its child: end the process group.
  for (const child of running) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  // An installed tree: thousands of files.
  await rm(work, { recursive: true, force: true });
}, 120_000);

/**
 * A plugin as an operator writes one in plain JavaScript: Nest's decorators applied as functions,
 * Gantry's hook class from the installed package. Its hook writes each generation's end to a file.
 */
const OUTCOME_LOG_PLUGIN = `import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { Injectable, Module } from '@nestjs/common';
import { GenerationHook } from 'gantry';

class OutcomeLog extends GenerationHook {
  onEnd(telemetry, outcome) {
    appendFileSync(join(import.meta.dirname, 'outcomes.log'), \`\${telemetry.model} \${outcome.kind}\\n\`);
  }
}
Injectable()(OutcomeLog);

export default class OutcomeLogPlugin {}
Module({ providers: [OutcomeLog] })(OutcomeLogPlugin);
`;

/** `npx gantry ARGS` in `cwd`, as someone who installed the package runs it (the local bin). */
function gantry(cwd: string, args: string[]) {
  const child = spawn('npx', ['gantry', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  running.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => {
      const match = /Gantry listening on (http:\/\/\S+)/.exec(stdout);
      if (match) resolve(match[1]);
    });
    void exited.then((code) => reject(new Error(`gantry exited with ${code}: ${stderr}`)));
  });
  listening.catch(() => undefined);
  return { child, exited, listening, stderr: () => stderr };
}

describe('the package (npm pack): the built gateway, installed into an empty folder', () => {
  it('holds dist/src only, installs without optional dependencies, serves the stub model with `npx gantry`, loads a plugin that imports `gantry` from the install, and refuses a llama model saying how to add node-llama-cpp', async () => {
    // The build `npm test` made: packing with its prepack script would rebuild dist/ under the tests running from it.
    const { stdout: packOutput } = await run(
      'npm',
      ['pack', '--ignore-scripts', '--json', '--pack-destination', work],
      { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
    );
    const [packed] = JSON.parse(packOutput) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const files = packed.files.map((file) => file.path);
    expect(files.filter((path) => !/^dist\/src\/.+\.(js|d\.ts)$/.test(path)).sort()).toEqual([
      'README.md',
      'package.json',
    ]);
    expect(files).toEqual(
      expect.arrayContaining([
        'dist/src/main.js',
        'dist/src/index.js',
        'dist/src/index.d.ts',
        'dist/src/engines/llama/llama-engine.js',
      ]),
    );
    expect(files.filter((path) => /\.spec\.|\/(apps|bench|mock-upstream|examples|scripts|test)\//.test(path))).toEqual(
      [],
    );
    expect(PACKAGE.bin).toEqual({ gantry: 'dist/src/main.js' });
    expect(PACKAGE.optionalDependencies['node-llama-cpp']).toBeDefined();
    expect(PACKAGE.dependencies['node-llama-cpp']).toBeUndefined();

    const app = join(work, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), '{ "name": "gantry-install-check", "private": true }\n');
    // From the local npm cache where it can: the packages of the repository's own install.
    await run(
      'npm',
      ['install', join(work, packed.filename), '--omit=optional', '--prefer-offline', '--no-audit', '--no-fund'],
      {
        cwd: app,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    expect(existsSync(join(app, 'node_modules', 'gantry', 'dist', 'src', 'main.js'))).toBe(true);
    expect(existsSync(join(app, 'node_modules', 'node-llama-cpp'))).toBe(false);

    const served = gantry(app, ['--port', '0', '--host', '127.0.0.1']);
    const client = new OpenAI({ baseURL: `${await served.listening}/v1`, apiKey: 'unused', maxRetries: 0 });
    let answer = '';
    for await (const chunk of await client.chat.completions.create({
      model: 'stub',
      stream: true,
      messages: [{ role: 'user', content: 'installed and serving' }],
    })) {
      answer += chunk.choices[0]?.delta.content ?? '';
    }
    expect(answer).toBe('installed and serving');

    // A plugin beside the install imports `gantry` (and Nest) from the node_modules there, as one mounted into the image does.
    mkdirSync(join(app, 'plugins'));
    writeFileSync(join(app, 'plugins', 'outcome-log.mjs'), OUTCOME_LOG_PLUGIN);
    writeFileSync(join(app, 'plugins.yaml'), 'plugins: [plugins/outcome-log.mjs]\n');
    const plugged = gantry(app, ['--config', 'plugins.yaml', '--port', '0', '--host', '127.0.0.1']);
    const pluggedClient = new OpenAI({ baseURL: `${await plugged.listening}/v1`, apiKey: 'unused', maxRetries: 0 });
    await pluggedClient.chat.completions.create({
      model: 'stub',
      messages: [{ role: 'user', content: 'seen by the plugin' }],
    });
    const outcomes = join(app, 'plugins', 'outcomes.log');
    const deadline = Date.now() + 10_000;
    while (!existsSync(outcomes) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    // Found among the providers as a GenerationHook: the very class the gateway runs, not a copy.
    expect(readFileSync(outcomes, 'utf8')).toBe('stub completed\n');

    writeFileSync(
      join(app, 'gantry.yaml'),
      'models:\n  - { name: local, engine: llama, modelPath: ./m.gguf, threads: 1 }\n',
    );
    const refused = gantry(app, ['--config', 'gantry.yaml', '--port', '0']);
    expect(await refused.exited).toBe(1);
    expect(refused.stderr()).toContain(
      `The engine of model 'local' could not start: the llama engine needs node-llama-cpp, an optional dependency that is not installed here. ` +
        `Add it beside Gantry (npm install node-llama-cpp@${PACKAGE.optionalDependencies['node-llama-cpp']}), or install Gantry without --omit=optional.`,
    );
  }, 180_000);
});
