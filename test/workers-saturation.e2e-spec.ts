import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../apps/mock-upstream/mock-upstream.js';
import { startCli, writeConfig, type CliProcess } from './support/cli-process.js';
import { eventually } from './support/gateway.js';
import { outsideTraffic, type OutsideTraffic } from './support/outside-traffic.js';
import { parsePrometheus, valueOf } from './support/prometheus.js';
import { postSse } from './support/sse-client.js';

// Saturation with server.workers: each worker reads the replica's /metrics and holds its own
// requests (docs/engines.md#saturation); the primary's /metrics averages their readings.
describe('saturation under server.workers: 2', () => {
  let replica: MockUpstream;
  let cli: CliProcess;
  let url: string;
  let outside: OutsideTraffic | undefined;

  beforeAll(async () => {
    replica = await startMockUpstream({ behaviour: { maxRunning: 2, tokens: 3 } });
    const file = writeConfig(`server: { workers: 2 }
keepalive: { intervalMs: 100 }
models:
  - name: held
    engine: http
    upstreams: [${JSON.stringify(replica.url)}]
    healthCheckIntervalMs: 0
    saturation: { waitingRequests: 1 }
    engineMetrics: { path: /metrics, intervalMs: 40 }
`);
    cli = startCli(['--config', file, '--port', '0']);
    url = await cli.listening;
  }, 60_000);

  afterAll(async () => {
    outside?.stop();
    if (cli?.child.exitCode === null) cli.child.kill('SIGKILL');
    await replica?.close();
  });

  it('holds requests on both workers with keep-alives while the replica is saturated, and releases them all', async () => {
    // Traffic Gantry did not send: two running, one waiting (at the threshold).
    outside = outsideTraffic(replica, 3);
    expect(await eventually(() => replica.state.waitingRequests === 1)).toBe(true);
    // Both workers read it: their average is 1 only when each says 1.
    const seen = async () =>
      valueOf(parsePrometheus(await (await fetch(`${url}/metrics`)).text()), 'gantry_engine_waiting_requests', {
        model: 'held',
      });
    expect(await eventually(async () => (await seen()) === 1, 15_000)).toBe(true);

    const before = replica.state.chatRequests;
    const heldHeartbeats = [0, 0, 0, 0];
    let sentWhileHeld: number | undefined;
    let released = false;
    const streams = heldHeartbeats.map((_, index) =>
      postSse(
        `${url}/v1/chat/completions`,
        { model: 'held', stream: true, messages: [{ role: 'user', content: `held ${index}` }] },
        {
          // A fresh connection each, so the primary hands them to both workers in turn.
          headers: { connection: 'close' },
          onFrame: (frame) => {
            if (!released && frame.kind === 'event' && frame.data.includes('"delta":{}')) heldHeartbeats[index] += 1;
            if (!released && heldHeartbeats.every((count) => count >= 3)) {
              // Every stream was kept alive while nothing reached the replica; now room is made.
              sentWhileHeld = replica.state.chatRequests - before;
              released = true;
              outside?.stop();
            }
          },
        },
      ),
    );
    const answers = await Promise.all(streams);
    expect(released).toBe(true);
    expect(sentWhileHeld).toBe(0);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    expect(new Set(answers.map((answer) => answer.headers.get('x-gantry-worker'))).size).toBe(2);
    for (const answer of answers) {
      const text = answer
        .json()
        .map((chunk) => chunk.choices?.[0]?.delta?.content ?? '')
        .join('');
      expect(text.length).toBeGreaterThan(0);
    }
    expect(replica.state.chatRequests).toBe(before + 4);
  });
});
