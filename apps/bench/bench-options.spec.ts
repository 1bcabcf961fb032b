import { describe, expect, it } from 'vitest';
import { FULL_PROFILE, parseBenchOptions, QUICK_PROFILE, SCENARIOS } from './bench-options.js';
import { isLoopbackHost, loopbackUrl } from './loopback.js';
import { cpuSecondsOf, rssBytesOf } from './proc-stats.js';

describe('parseBenchOptions', () => {
  it('runs every scenario of the full profile by default', () => {
    expect(parseBenchOptions([])).toEqual({
      profile: FULL_PROFILE,
      scenarios: [...SCENARIOS],
      outDir: 'bench-results',
    });
  });

  it('takes --quick, --only and --idle-streams', () => {
    const options = parseBenchOptions(['--quick', '--only', 'idle, latency', '--idle-streams', '100']);
    expect(options).toMatchObject({ profile: { name: 'quick' }, scenarios: ['idle', 'latency'] });
    expect(options !== 'help' && options.profile.idle.streams).toBe(100);
    expect(QUICK_PROFILE.idle.streams).toBe(500);
  });

  it('takes --nginx BIN for reference rows, and refuses it empty', () => {
    expect(parseBenchOptions(['--nginx', '/usr/sbin/nginx'])).toMatchObject({ nginx: '/usr/sbin/nginx' });
    expect(parseBenchOptions([])).not.toHaveProperty('nginx');
    expect(() => parseBenchOptions(['--nginx', ' '])).toThrow(/--nginx needs/);
  });

  it('takes --ab DIR for a paired A/B against another build, and refuses it empty', () => {
    expect(parseBenchOptions(['--ab', '/tmp/before', '--quick'])).toMatchObject({
      ab: '/tmp/before',
      profile: { name: 'quick' },
    });
    expect(parseBenchOptions([])).not.toHaveProperty('ab');
    expect(() => parseBenchOptions(['--ab', ''])).toThrow(/--ab needs/);
  });

  it('refuses unknown scenarios and silly stream counts', () => {
    expect(() => parseBenchOptions(['--only', 'everything'])).toThrow(/unknown scenario everything/);
    expect(() => parseBenchOptions(['--idle-streams', '-3'])).toThrow(/--idle-streams/);
  });

  it('keeps the full run near four minutes and the quick one near 30 s of load', () => {
    const loadSeconds = (profile: typeof FULL_PROFILE) => {
      const timed = (timing: { warmupMs: number; measureMs: number }, runs: number) =>
        ((timing.warmupMs + timing.measureMs) * runs) / 1000;
      return (
        profile.gatewayWarmupMs / 1000 +
        timed(profile.throughput.timing, profile.throughput.concurrencies.length * 3 * profile.throughput.rounds) +
        timed(profile.latency.timing, (profile.latency.withStub ? 3 : 2) * profile.latency.rounds) +
        timed(profile.nonStreaming.timing, 3 * profile.nonStreaming.rounds) +
        (profile.gatewayWarmupMs * 2) / 1000 +
        timed(profile.observability.timing, profile.observability.engines.length * 2 * profile.observability.rounds) +
        ((profile.idle.holdMs + profile.idle.keepaliveMs * 1.5 + profile.idle.settleMs) * 2) / 1000 +
        multiTurnSeconds(profile.multiTurn) +
        timed(profile.llama.timing, profile.llama.concurrencies.length) +
        workersSeconds(profile.workers)
      );
    };
    expect(loadSeconds(FULL_PROFILE)).toBeLessThan(250);
    expect(loadSeconds(QUICK_PROFILE)).toBeLessThan(32);
  });

  it('takes stored-responses, and keeps it under 15 s of load with --quick and 45 s in full', () => {
    expect(parseBenchOptions(['--quick', '--only', 'stored-responses'])).toMatchObject({
      scenarios: ['stored-responses'],
    });
    // Warm-up, the store's prefill (bounded by time), then each row's windows in every round.
    const loadSeconds = ({ gatewayWarmupMs, storedResponses: plan }: typeof FULL_PROFILE) =>
      (gatewayWarmupMs +
        plan.prefillMaxMs +
        plan.rounds *
          plan.engines.length *
          (plan.background ? 3 : 2) *
          (plan.timing.warmupMs + plan.timing.measureMs)) /
      1000;
    expect(loadSeconds(QUICK_PROFILE)).toBeLessThan(15);
    expect(loadSeconds(FULL_PROFILE)).toBeLessThan(45);
  });
});

/** Each gateway's warm-up, streaming rounds per gateway (saturated, paced), admission rounds per concurrency and model, round trips, stored responses per gateway and store. */
function workersSeconds(plan: typeof FULL_PROFILE.workers): number {
  const timed = (timing: { warmupMs: number; measureMs: number }, runs: number) =>
    ((timing.warmupMs + timing.measureMs) * runs) / 1000;
  const gateways = plan.counts.length;
  return (
    (gateways * plan.warmupMs * 1.25) / 1000 +
    timed(plan.saturated.timing, gateways * plan.saturated.rounds) +
    timed(plan.paced.timing, (gateways + 1) * plan.paced.rounds) +
    (plan.warmupMs * (Math.max(...plan.counts) - 1)) / 1000 +
    timed(plan.admission.timing, plan.admission.concurrencies.length * 2 * plan.admission.rounds) +
    (gateways * plan.warmupMs) / 4000 +
    timed(plan.stored.timing, gateways * 2 * plan.stored.rounds) +
    (plan.roundTrips.inFlight.length * plan.roundTrips.durationMs * 1.5) / 1000
  );
}

/** A conversation's turns take a think pause, a prefill and an answer; each variant runs its waves of them. */
function multiTurnSeconds(plan: typeof FULL_PROFILE.multiTurn): number {
  const turnMs = (plan.thinkMs[0] + plan.thinkMs[1]) / 2 + plan.answerTokens * plan.tokenIntervalMs;
  const conversationMs = (turns: number, count: number) =>
    plan.rampMs + Math.ceil(count / plan.concurrency) * turns * turnMs;
  const variants = 1 + plan.loadFactors.length;
  return (
    (variants *
      (plan.rounds * conversationMs(plan.turns, plan.conversations) + conversationMs(2, plan.warmupConversations))) /
    1000
  );
}

describe('loopback targets only', () => {
  it('accepts 127.0.0.0/8, localhost and ::1, and refuses anything else', () => {
    expect(isLoopbackHost('127.0.0.1')).toBe(true);
    expect(isLoopbackHost('127.1.2.3')).toBe(true);
    expect(isLoopbackHost('localhost')).toBe(true);
    expect(isLoopbackHost('[::1]')).toBe(true);
    expect(isLoopbackHost('10.0.0.5')).toBe(false);
    expect(isLoopbackHost('127.0.0.1.example.com')).toBe(false);
    expect(() => loopbackUrl('http://example.com/v1')).toThrow(/non-loopback/);
    expect(loopbackUrl('http://127.0.0.1:8000/v1').port).toBe('8000');
  });
});

describe('/proc readers', () => {
  it('adds utime and stime after the command name, whatever it holds', () => {
    const stat = '4242 (node (main) x) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 50 0 0 20 0 11 0 100 0 0';
    expect(cpuSecondsOf(stat)).toBe(3);
  });

  it('reads VmRSS in bytes', () => {
    expect(rssBytesOf('Name:\tnode\nVmRSS:\t   51200 kB\nThreads:\t11\n')).toBe(51200 * 1024);
  });
});
