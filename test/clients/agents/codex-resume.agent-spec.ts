import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../../../apps/mock-upstream/mock-upstream.js';
import { startCli, writeConfig, type CliProcess } from '../../support/cli-process.js';
import { agentHome, CODEX_LAUNCHER, runAgent } from './agent-process.js';
import { startNetworkSpy, type NetworkSpy } from './network-spy.js';

// Codex CLI on its default model, served by an HTTP model whose replica dies after three words of
// every answer; the continuation's prefill (a second) is filled with Responses `keepalive` events
// every 100 ms, after output began: Codex must take them and print the whole answer.

/** The model this pinned Codex asks for when none is configured (see coding-agents.agent-spec.ts). */
const CODEX_DEFAULT_MODEL = 'gpt-6.2-sol';
const PROMPT = 'repeat these words alpha bravo charlie delta echo foxtrot';

let replicas: MockUpstream[];
let gateway: CliProcess;
let baseUrl: string;
let spy: NetworkSpy;

beforeAll(async () => {
  replicas = await Promise.all([0, 1].map(() => startMockUpstream()));
  const behaviour = JSON.stringify({ failure: 'drop', failAtTokens: [3], prefillMs: 1000 });
  const config = [
    'keepalive: { mode: chunks, intervalMs: 100 }',
    'models:',
    `  - name: ${CODEX_DEFAULT_MODEL}`,
    '    engine: http',
    `    upstreams: [${replicas.map((replica) => replica.url).join(', ')}]`,
    '    healthCheckIntervalMs: 0',
    '    maxFailures: 1000',
    `    headers: { x-mock-behaviour: '${behaviour}' }`,
    '',
  ].join('\n');
  gateway = startCli(['--config', writeConfig(config), '--port', '0', '--host', '127.0.0.1']);
  [baseUrl, spy] = await Promise.all([gateway.listening, startNetworkSpy()]);
});
afterAll(async () => {
  gateway?.child.kill('SIGTERM');
  await gateway?.exited;
  await spy?.close();
  await Promise.all((replicas ?? []).map((replica) => replica.close()));
});

describe('Codex CLI through a mid-stream resume (Responses keepalive events after output began)', () => {
  const { home, workdir } = agentHome('codex-resume');
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  beforeAll(() => {
    mkdirSync(join(home, '.codex'));
    writeFileSync(
      join(home, '.codex', 'config.toml'),
      [
        'model_provider = "gantry"',
        'check_for_update_on_startup = false',
        '',
        '[model_providers.gantry]',
        'name = "Gantry"',
        `base_url = "${baseUrl}/v1"`,
        'wire_api = "responses"',
        'env_key = "GANTRY_API_KEY"',
        '',
        '[analytics]',
        'enabled = false',
        '',
        '[feedback]',
        'enabled = false',
        '',
        '[features]',
        'plugins = false',
        '',
      ].join('\n'),
    );
  });

  it('prints the whole answer, continued on the other replica', async () => {
    const run = await runAgent(CODEX_LAUNCHER, ['exec', '--skip-git-repo-check', PROMPT], {
      cwd: workdir,
      env: { HOME: home, GANTRY_API_KEY: 'dummy-key', ...spy.env },
      timeoutMs: 90_000,
    });
    const transcript = `exit ${run.code}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}\n--- gateway\n${gateway.output().stdout.slice(-4000)}`;
    expect(run.code, transcript).toBe(0);
    expect(run.stdout, transcript).toContain(PROMPT);
    const continued = replicas.flatMap((replica) =>
      replica.state.received.filter((request) => request.body.continue_final_message === true),
    );
    expect(continued.length, transcript).toBeGreaterThan(0);
    expect(spy.hosts.splice(0)).toEqual([]);
  });
});
