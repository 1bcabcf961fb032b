import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChildServer, type ChildServer } from './child-server.js';
import { delay } from './closed-loop.js';
import { loopbackUrl } from './loopback.js';
import { startNginx } from './nginx-proxy.js';

/** `npm run bench -- --profile KIND`: the profiler, and the folder its files go to. */
export interface Profiling {
  kind: 'cpu' | 'heap' | 'gc';
  dir: string;
}

/** Where a load generator sends chat requests, and which processes to watch while it does. */
export interface BenchTarget {
  label: string;
  chatUrl: URL;
  model: string;
  headers?: Record<string, string>;
  /** Words in the prompt; by default as many as the answer's tokens (the mock and the stub echo it). */
  promptWords?: number;
  /** The gateway process whose CPU and memory are measured (none for direct runs). */
  gatewayPid?: number;
  /** The upstream mock process, when one is involved. */
  upstreamPid?: number;
}

/**
 * The processes of one benchmark run, all on loopback: the mock upstream and gateways, each a
 * production build started with `node` as its own child process, configured from files written
 * into a temporary folder that `dispose()` removes.
 */
export class BenchStack {
  readonly workDir = mkdtempSync(join(tmpdir(), 'gantry-bench-'));
  private readonly servers = new Set<ChildServer>();

  /** @param profiling the profiler every gateway and the bare proxy run under, and where its output goes. */
  constructor(
    readonly root: string,
    private readonly profiling?: Profiling,
  ) {}

  path(name: string): string {
    return join(this.workDir, name);
  }

  /** The node flags of a profiled process (`name`: its folder or log under the profiles folder). */
  private profiled(name: string): { nodeArgs: string[]; logPath?: string } {
    const profiling = this.profiling;
    if (profiling === undefined) return { nodeArgs: [] };
    const folder = join(profiling.dir, name);
    if (profiling.kind === 'cpu') return { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${folder}`] };
    if (profiling.kind === 'heap') return { nodeArgs: ['--heap-prof', `--heap-prof-dir=${folder}`] };
    // V8 writes its GC trace to stdout: the process's whole log is kept, beside the profiles.
    mkdirSync(profiling.dir, { recursive: true });
    return { nodeArgs: ['--trace-gc', '--trace-gc-nvp'], logPath: `${folder}.gc.log` };
  }

  /** A mock upstream; `flags` set its behaviour (see its README), `name` its log file. */
  async startMock(flags: string[] = [], name = 'mock-upstream'): Promise<ChildServer> {
    return this.track(
      await startChildServer({
        name,
        args: ['dist/apps/mock-upstream/main.js', '--port', '0', '--host', '127.0.0.1', ...flags],
        cwd: this.root,
        logPath: this.path(`${name}.log`),
        listening: /listening on (http:\/\/\S+)/,
        startTimeoutMs: 15_000,
      }),
    );
  }

  /** The bare proxy (bare-proxy.ts) in front of `upstream` (the mock's base URL, ending in `/v1`). */
  async startBareProxy(upstream: URL): Promise<ChildServer> {
    const profiled = this.profiled('bare-proxy');
    return this.track(
      await startChildServer({
        name: 'bare proxy',
        args: [
          ...profiled.nodeArgs,
          'dist/apps/bench/bare-proxy.js',
          '--upstream',
          upstream.toString(),
          '--port',
          '0',
          '--host',
          '127.0.0.1',
        ],
        cwd: this.root,
        logPath: profiled.logPath ?? this.path('bare-proxy.log'),
        listening: /bare proxy listening on (http:\/\/\S+)/,
        startTimeoutMs: 15_000,
        env: { NODE_ENV: 'production' },
      }),
    );
  }

  /** nginx (`binary`) as a plain reverse proxy in front of `upstream`, for reference rows. */
  async startNginx(binary: string, upstream: URL): Promise<ChildServer> {
    return this.track(await startNginx(binary, upstream, this.workDir));
  }

  /** Writes `config` (JSON is YAML) and starts `node dist/src/main.js --config FILE` on a free port. */
  async startGateway(name: string, config: Record<string, unknown>): Promise<ChildServer> {
    const configPath = this.path(`${name}.yaml`);
    writeFileSync(configPath, JSON.stringify(config, null, 2));
    const profiled = this.profiled(`gateway-${name}`);
    const gateway = await startChildServer({
      name: `gateway ${name}`,
      args: [...profiled.nodeArgs, 'dist/src/main.js', '--config', configPath, '--port', '0', '--host', '127.0.0.1'],
      cwd: this.root,
      logPath: profiled.logPath ?? this.path(`gateway-${name}.log`),
      listening: /Gantry listening on (http:\/\/\S+)/,
      startTimeoutMs: 60_000,
      env: { NODE_ENV: 'production' },
    });
    this.track(gateway);
    await waitForReady(gateway.url, 15_000);
    return gateway;
  }

  /** Stops `server` (SIGTERM, then SIGKILL past `graceMs`; 0: SIGKILL at once). */
  async stop(server: ChildServer, graceMs?: number): Promise<void> {
    this.servers.delete(server);
    await server.stop(graceMs);
  }

  async dispose(): Promise<void> {
    await Promise.all([...this.servers].map((server) => server.stop()));
    this.servers.clear();
    rmSync(this.workDir, { recursive: true, force: true });
  }

  private track(server: ChildServer): ChildServer {
    this.servers.add(server);
    return server;
  }
}

/** The chat URL of a gateway, or of the mock (whose base URL ends in `/v1`). */
export function chatUrlOf(base: URL): URL {
  const prefix = base.pathname.replace(/\/+$/, '');
  return loopbackUrl(new URL(`${prefix.endsWith('/v1') ? prefix : `${prefix}/v1`}/chat/completions`, base).toString());
}

async function waitForReady(base: URL, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      const response = await fetch(new URL('/ready', base));
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // not accepting yet
    }
    if (performance.now() > deadline) throw new Error(`${base.origin}/ready did not answer 200 within ${timeoutMs} ms`);
    await delay(50);
  }
}
