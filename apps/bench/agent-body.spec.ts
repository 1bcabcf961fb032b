import { describe, expect, it } from 'vitest';
import { agentBody, agentMessages, agentTools } from './agent-body.js';
import { agentOverBare, renderAgent, renderPause } from './agent-report.js';
import { pauseBodies } from './pause-scenario.js';
import type { AgentResult } from './agent-scenario.js';

describe('the agent body', () => {
  it("is a coding agent's turn: 181 messages, 24 tools, about 260 KB, the same every time", () => {
    const body = JSON.parse(agentBody('m', 16, true)) as { messages: unknown[]; tools: unknown[]; max_tokens: number };
    expect(body.messages).toHaveLength(181);
    expect(body.tools).toHaveLength(24);
    expect(body.max_tokens).toBe(16);
    expect(Buffer.byteLength(agentBody('m', 16, true)) / 1024).toBeGreaterThan(240);
    expect(Buffer.byteLength(agentBody('m', 16, true)) / 1024).toBeLessThan(280);
    expect(agentBody('m', 16, true)).toBe(agentBody('m', 16, true));
    expect(agentMessages().filter((message) => message.role === 'tool')).toHaveLength(60);
    expect(agentTools()[0]).toMatchObject({ type: 'function', function: { name: 'tool_0' } });
  });

  it('makes the pause bodies with the many-messages count asked for', () => {
    const bodies = pauseBodies({
      streams: 1,
      tokens: 1,
      everyMs: 1,
      manyMessages: 7,
      timing: { warmupMs: 0, measureMs: 0 },
    });
    const counts = bodies.map(({ body }) => (JSON.parse(body) as { messages: unknown[] }).messages.length);
    expect(counts).toEqual([181, 7, 7, 10_000, 7, 1]);
    const strings = JSON.parse(bodies[5].body) as { stop: string[] };
    expect(bodies[5].body.length).toBeLessThanOrEqual(8 * 1024 * 1024);
    expect(strings.stop.length).toBeGreaterThan(1_000_000);
  });
});

describe('the agent report', () => {
  const row = (target: string, micros: number): AgentResult => ({
    target,
    concurrency: 8,
    tokensPerAnswer: 16,
    bodyBytes: 260_000,
    rounds: 3,
    requestsPerSecond: 50,
    cpu: { gatewayMicrosPerUnit: micros },
    failures: {},
  });

  it('reads the gateway over the bare proxy, and prints it', () => {
    const rows = [row('direct', 0), row('bare proxy', 5000), row('gantry http', 7500)];
    expect(agentOverBare(rows)).toBe(1.5);
    expect(agentOverBare(rows.slice(0, 2))).toBeUndefined();
    expect(renderAgent(rows)[1]).toContain('1.50x');
    const [title, table] = renderPause([
      {
        bodies: 'none',
        bodyBytes: 0,
        sent: 0,
        accepted: 0,
        answerMs: { count: 0 },
        gaps: { count: 3, p50: 10, p99: 12.34, max: 20 },
      },
    ]);
    expect(title).toContain('Loop pauses');
    expect(table).toContain('12.3');
  });
});
