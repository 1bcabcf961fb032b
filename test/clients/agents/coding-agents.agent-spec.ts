import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, writeConfig, type CliProcess } from '../../support/cli-process.js';
import { agentHome, CLAUDE_LAUNCHER, CODEX_LAUNCHER, runAgent, type AgentRun } from './agent-process.js';
import { startNetworkSpy, type NetworkSpy } from './network-spy.js';

// Codex CLI and Claude Code, on their defaults, against a gateway started as `npm start` runs it.
// The gateway serves each agent's default model under that model's name (stub engine, with
// reasoning). Each agent gets a fresh HOME, only the settings that point it at Gantry, and the
// switches that keep it off the network (telemetry, update checks, plugin sync); a refusing proxy
// records anything that still tries to leave the machine.

/** The models these pinned versions ask for when none is configured. */
const CODEX_DEFAULT_MODEL = 'gpt-6.2-sol';
const CLAUDE_CODE_DEFAULT_MODEL = 'claude-opus-4-8';
const AGENT_TIMEOUT_MS = 90_000;

let gateway: CliProcess;
let baseUrl: string;
let spy: NetworkSpy;

beforeAll(async () => {
  const models = [CODEX_DEFAULT_MODEL, CLAUDE_CODE_DEFAULT_MODEL]
    .map((name) => `  - { name: ${name}, engine: stub, reasoning: "let me think" }`)
    .join('\n');
  gateway = startCli(['--config', writeConfig(`models:\n${models}\n`), '--port', '0', '--host', '127.0.0.1']);
  [baseUrl, spy] = await Promise.all([gateway.listening, startNetworkSpy()]);
});
afterAll(async () => {
  gateway?.child.kill('SIGTERM');
  await gateway?.exited;
  await spy?.close();
});

/** Everything a failed run said, for the assertion message. */
const transcript = (run: AgentRun) =>
  `exit ${run.code}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}\n--- gateway\n${gateway.output().stdout.slice(-4000)}`;

function expectAnswered(run: AgentRun, text: string) {
  expect(run.code, transcript(run)).toBe(0);
  expect(run.stdout, transcript(run)).toContain(text);
  expect(spy.hosts.splice(0), 'connections the agent tried to open beyond loopback').toEqual([]);
}

/** Waits (up to 3 s) for the gateway's request log to show what `condition` looks for. */
async function logged(condition: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 3000; !condition() && Date.now() < deadline;)
    await new Promise((resolve) => setTimeout(resolve, 20));
}

/** The prompt sizes of the requests the gateway completed on one API, from its request log. */
function promptTokensServed(api: 'responses' | 'messages'): number[] {
  return gateway
    .output()
    .stdout.split('\n')
    .slice(0, -1) // the last piece may be a line still being written
    .flatMap((line) => {
      if (!line.startsWith('{')) return [];
      const entry = JSON.parse(line) as { msg?: string; api?: string; outcome?: string; promptTokens?: number };
      return entry.msg === 'request completed' && entry.api === api && entry.outcome === 'completed'
        ? [entry.promptTokens ?? 0]
        : [];
    });
}

describe('Codex CLI (codex exec, Responses API)', () => {
  const { home, workdir } = agentHome('codex');
  afterAll(() => rmSync(home, { recursive: true, force: true }));
  const run = (args: string[]) =>
    runAgent(CODEX_LAUNCHER, ['exec', '--skip-git-repo-check', ...args], {
      cwd: workdir,
      env: { HOME: home, GANTRY_API_KEY: 'dummy-key', ...spy.env },
      timeoutMs: AGENT_TIMEOUT_MS,
    });

  beforeAll(() => {
    mkdirSync(join(home, '.codex'));
    // A custom provider on the Responses wire; the rest keeps Codex offline: no update check,
    // no analytics or feedback uploads, no plugin marketplace sync (a git fetch from github.com).
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

  it('answers a prompt on its default model', async () => {
    expectAnswered(await run(['say hi']), 'say hi');
  });

  it('resumes the session, sending the first turn back', async () => {
    expectAnswered(await run(['resume', '--last', 'and once more']), 'and once more');
    // The request log line may land just after the agent has exited.
    await logged(() => promptTokensServed('responses').length >= 2);
    const [first, resumed] = promptTokensServed('responses').slice(-2);
    expect(resumed).toBeGreaterThan(first);
  });
});

describe('Claude Code (claude -p, Messages API)', () => {
  const { home, workdir } = agentHome('claude');
  afterAll(() => rmSync(home, { recursive: true, force: true }));
  const run = (args: string[]) =>
    runAgent(CLAUDE_LAUNCHER, ['-p', ...args], {
      cwd: workdir,
      env: {
        HOME: home,
        ANTHROPIC_BASE_URL: baseUrl,
        ANTHROPIC_API_KEY: 'dummy-key',
        // Telemetry, error reports, auto-update and every other call to Anthropic's own services.
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_ERROR_REPORTING: '1',
        DISABLE_AUTOUPDATER: '1',
        ...spy.env,
      },
      timeoutMs: AGENT_TIMEOUT_MS,
    });

  it('answers a prompt on its default model', async () => {
    expectAnswered(await run(['say hi']), 'say hi');
  });

  it('continues the conversation, sending the first turn back', async () => {
    expectAnswered(await run(['--continue', 'and once more']), 'and once more');
    await logged(() => promptTokensServed('messages').length >= 2);
    const [first, continued] = promptTokensServed('messages').slice(-2);
    expect(continued).toBeGreaterThan(first);
  });
});
