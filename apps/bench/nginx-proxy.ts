import { writeFileSync } from 'node:fs';
import { startChildServer, type ChildServer } from './child-server.js';
import { freePort } from './loopback.js';

/**
 * nginx as a plain reverse proxy in front of the mock, for reference rows (`--nginx BIN`): what a
 * C proxy costs on the same machine, in the same run. One process (no master, one worker, as
 * Gantry runs on one thread), keep-alive connections upstream, responses not buffered (SSE
 * passes through as it comes).
 */
export function nginxConfig(options: { port: number; upstream: URL; dir: string }): string {
  const { port, upstream, dir } = options;
  return `daemon off;
master_process off;
worker_processes 1;
worker_rlimit_nofile 40000;
pid ${dir}/nginx.pid;
error_log ${dir}/nginx-error.log warn;
events { worker_connections 20000; }
http {
  access_log off;
  keepalive_requests 1000000;
  client_body_temp_path ${dir}/nginx-body;
  proxy_temp_path ${dir}/nginx-proxy;
  fastcgi_temp_path ${dir}/nginx-fastcgi;
  uwsgi_temp_path ${dir}/nginx-uwsgi;
  scgi_temp_path ${dir}/nginx-scgi;
  upstream bench_upstream {
    server ${upstream.host};
    keepalive 256;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://bench_upstream;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
}
`;
}

/**
 * Starts `binary` (a path, or a name on PATH) with a config from `nginxConfig`, on a free port.
 * The port is picked, released and then bound by nginx: should another server take it in
 * between, nginx exits and the one answering is not nginx, so each start is checked (its
 * `Server` header) and tried again on another port.
 */
export async function startNginx(binary: string, upstream: URL, dir: string, attempts = 3): Promise<ChildServer> {
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    const configPath = `${dir}/nginx.conf`;
    writeFileSync(configPath, nginxConfig({ port, upstream, dir }));
    const server = await startChildServer({
      name: 'nginx',
      command: binary,
      // The error log named in the config; nginx may still try its built-in one first (a warning).
      args: ['-p', `${dir}/`, '-c', configPath],
      cwd: dir,
      logPath: `${dir}/nginx.log`,
      listening: new URL(`http://127.0.0.1:${port}`),
      startTimeoutMs: 10_000,
    });
    if (await answersAsNginx(server.url)) return server;
    await server.stop();
    if (attempt >= attempts)
      throw new Error(
        `nginx did not come up on a port of its own after ${attempts} tries (see ${dir}/nginx-error.log)`,
      );
  }
}

/** Whether what listens at `url` is nginx (its `Server` header; a request to an unknown path will do). */
async function answersAsNginx(url: URL): Promise<boolean> {
  try {
    const response = await fetch(new URL('/gantry-bench-probe', url), { signal: AbortSignal.timeout(5000) });
    await response.arrayBuffer();
    return (response.headers.get('server') ?? '').startsWith('nginx');
  } catch {
    return false;
  }
}
