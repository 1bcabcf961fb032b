import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { startChildServer, type ChildServer } from './child-server.js';

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
  client_body_temp_path ${dir}/nginx-body;
  proxy_temp_path ${dir}/nginx-proxy;
  upstream bench_upstream {
    server ${upstream.host};
    keepalive 256;
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

/** Starts `binary` (a path, or a name on PATH) with a config from `nginxConfig`, on a free port. */
export async function startNginx(binary: string, upstream: URL, dir: string): Promise<ChildServer> {
  const port = await freePort();
  const configPath = `${dir}/nginx.conf`;
  writeFileSync(configPath, nginxConfig({ port, upstream, dir }));
  return startChildServer({
    name: 'nginx',
    command: binary,
    args: ['-p', dir, '-e', `${dir}/nginx-error.log`, '-c', configPath],
    cwd: dir,
    logPath: `${dir}/nginx.log`,
    listening: new URL(`http://127.0.0.1:${port}`),
    startTimeoutMs: 10_000,
  });
}

/** A port nothing listens on now (the kernel's pick, released at once). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
